import type { AccountUsage } from '@meridian/contracts';

interface NodeLine {
  network: string;
  method: string;
  calls: number;
  cu: number;
}

interface DeliveryLine {
  webhookId: string;
  attempts: number;
  cu: number;
}

/**
 * CU metered in memory until the next flush: node calls per account → (network, method),
 * webhook delivery attempts per account → webhookId. `drain` hands over one window as the
 * account entries of a usage flush (ADR 0103). Adding is a couple of map lookups, no I/O.
 */
export class UsageMeter {
  private nodes = new Map<string, Map<string, NodeLine>>();
  private deliveries = new Map<string, Map<string, DeliveryLine>>();

  /** Node calls served (rpc-gateway). */
  add(accountId: string, network: string, method: string, cu: number, calls = 1): void {
    let lines = this.nodes.get(accountId);
    if (lines === undefined) {
      lines = new Map();
      this.nodes.set(accountId, lines);
    }
    const key = `${network}|${method}`;
    const line = lines.get(key);
    if (line === undefined) lines.set(key, { network, method, calls, cu });
    else {
      line.calls += calls;
      line.cu += cu;
    }
  }

  /** Webhook delivery attempts made (delivery-worker). */
  addDelivery(accountId: string, webhookId: string, cu: number, attempts = 1): void {
    let lines = this.deliveries.get(accountId);
    if (lines === undefined) {
      lines = new Map();
      this.deliveries.set(accountId, lines);
    }
    const line = lines.get(webhookId);
    if (line === undefined) lines.set(webhookId, { webhookId, attempts, cu });
    else {
      line.attempts += attempts;
      line.cu += cu;
    }
  }

  get pendingAccounts(): number {
    return this.nodes.size + this.deliveries.size;
  }

  /** Everything metered since the last drain, one entry per account and kind. */
  drain(): AccountUsage[] {
    const nodes = this.nodes;
    const deliveries = this.deliveries;
    this.nodes = new Map();
    this.deliveries = new Map();
    const entries: AccountUsage[] = [];
    for (const [accountId, lines] of nodes) {
      let totalCu = 0;
      const items = [];
      for (const line of lines.values()) {
        totalCu += line.cu;
        items.push(line);
      }
      entries.push({ kind: 'node', accountId, items, totalCu });
    }
    for (const [accountId, lines] of deliveries) {
      let totalCu = 0;
      const items = [];
      for (const line of lines.values()) {
        totalCu += line.cu;
        items.push(line);
      }
      entries.push({ kind: 'webhook_delivery', accountId, items, totalCu });
    }
    return entries;
  }
}
