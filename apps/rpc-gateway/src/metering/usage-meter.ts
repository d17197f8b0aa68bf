import type { NodeUsage } from '@meridian/contracts';
import { usageId } from '@meridian/contracts';
import type { NetworkKey } from '@meridian/networks';

interface Line {
  network: NetworkKey;
  method: string;
  calls: number;
  cu: number;
}

/**
 * CU of served calls, summed in memory per account → (network, method). `drain` turns one
 * window into one usage event per account with an idempotency id that is unique per replica
 * and window, so a re-publish after a timeout is applied once by billing-ledger.
 */
export class UsageMeter {
  private accounts = new Map<string, Map<string, Line>>();

  add(accountId: string, network: NetworkKey, method: string, cu: number, calls = 1): void {
    let lines = this.accounts.get(accountId);
    if (lines === undefined) {
      lines = new Map();
      this.accounts.set(accountId, lines);
    }
    const key = `${network}|${method}`;
    const line = lines.get(key);
    if (line === undefined) lines.set(key, { network, method, calls, cu });
    else {
      line.calls += calls;
      line.cu += cu;
    }
  }

  get pendingAccounts(): number {
    return this.accounts.size;
  }

  drain(producerId: string, windowStart: Date, windowEnd: Date): NodeUsage[] {
    const accounts = this.accounts;
    this.accounts = new Map();
    const events: NodeUsage[] = [];
    const start = windowStart.toISOString();
    for (const [accountId, lines] of accounts) {
      const items = [...lines.values()].map((l) => ({
        network: l.network,
        method: l.method,
        calls: l.calls,
        cu: l.cu,
      }));
      events.push({
        id: usageId(producerId, accountId, start),
        kind: 'node',
        accountId,
        producerId,
        windowStart: start,
        windowEnd: windowEnd.toISOString(),
        items,
        totalCu: items.reduce((sum, item) => sum + item.cu, 0),
      });
    }
    return events;
  }

  /** Puts events back after a failed publish; they go out with the next window. */
  restore(events: readonly NodeUsage[]): void {
    for (const event of events)
      for (const item of event.items)
        this.add(event.accountId, item.network as NetworkKey, item.method, item.cu, item.calls);
  }
}
