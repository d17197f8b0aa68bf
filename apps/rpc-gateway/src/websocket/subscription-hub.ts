import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import type { Logger } from 'pino';
import type { NetworkKey } from '@meridian/networks';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import type { UpstreamPool } from '../upstreams/upstream-pool';

/** Where a subscription's notifications go (one client subscription). */
export interface SubscriberSink {
  /**
   * One notification for the subscription `subscriptionId` (the id the hub gave this sink),
   * `resultText` being the notification's result as JSON text; false when the client was cut off.
   */
  notify(subscriptionId: string, resultText: string): boolean;
}

/**
 * Client subscriptions fanned out from shared entries (one per distinct params): each client
 * gets its own random subscription id; an entry knows its clients' sinks.
 */
export class ClientFanOut<E extends { readonly sinks: Map<string, SubscriberSink> }> {
  private readonly byClientId = new Map<string, E>();

  /** Adds a client to the entry; the subscription id the client sees. */
  add(entry: E, sink: SubscriberSink): string {
    const clientId = `0x${randomBytes(16).toString('hex')}`;
    entry.sinks.set(clientId, sink);
    this.byClientId.set(clientId, entry);
    return clientId;
  }

  /** Removes a client; its entry (now perhaps without clients), or undefined for an unknown id. */
  remove(clientId: string): E | undefined {
    const entry = this.byClientId.get(clientId);
    if (entry === undefined) return undefined;
    this.byClientId.delete(clientId);
    entry.sinks.delete(clientId);
    return entry;
  }

  /** One notification to every client of the entry. */
  static notify(entry: { readonly sinks: Map<string, SubscriberSink> }, resultText: string): void {
    for (const [clientId, sink] of entry.sinks) sink.notify(clientId, resultText);
  }
}

/** The subscriptions of one network, as the WebSocket edge uses them. */
export interface NetworkSubscriptionPort {
  /** Resolves to the subscription id the client sees. */
  subscribe(params: readonly unknown[], sink: SubscriberSink): Promise<string>;
  unsubscribe(subscriptionId: string): boolean;
}

/**
 * The replica's subscriptions: in this process (`SubscriptionHub`) or, with several processes
 * per replica, in the primary (`RemoteSubscriptions`, ADR 0204). Either way one upstream
 * subscription per network and distinct params, and one per-account count for the replica.
 */
export interface Subscriptions {
  of(network: NetworkKey): NetworkSubscriptionPort | undefined;
  /** Counts one more subscription of the account unless it already has `limit`. */
  reserve(accountId: string, limit: number): boolean | Promise<boolean>;
  release(accountId: string): void;
  close(): void;
}

interface Shared {
  readonly key: string;
  readonly type: string;
  readonly paramsJson: string;
  upstreamId: string | undefined;
  /**
   * The upstream eth_subscribe in flight for this entry (the first caller's, or a resubscribe):
   * callers with the same params wait on it and get its outcome, the node's refusal included.
   */
  established: Promise<void> | undefined;
  readonly sinks: Map<string, SubscriberSink>;
}

/**
 * One upstream WebSocket per network, one upstream subscription per distinct (type, filter),
 * fanned out to every client subscription that asked for it. When the upstream connection fails,
 * the hub reconnects to another node of the pool and re-subscribes everything; clients keep
 * their subscription ids and at most see a gap.
 */
export class NetworkSubscriptions implements NetworkSubscriptionPort {
  private socket: WebSocket | undefined;
  private connecting: Promise<WebSocket> | undefined;
  private readonly shared = new Map<string, Shared>();
  private readonly byUpstreamId = new Map<string, Shared>();
  private readonly clients = new ClientFanOut<Shared>();
  private readonly pending = new Map<
    number,
    (message: { result?: unknown; error?: { message?: string } }) => void
  >();
  private nextId = 1;
  private failedIndex: number | undefined;
  private closed = false;

  constructor(
    private readonly network: NetworkKey,
    private readonly pool: UpstreamPool,
    private readonly metrics: GatewayMetrics,
    private readonly logger: Logger,
  ) {}

  get upstreamSubscriptionCount(): number {
    return this.shared.size;
  }

  async subscribe(params: readonly unknown[], sink: SubscriberSink): Promise<string> {
    const type = String(params[0]);
    const key = JSON.stringify(params);
    let entry = this.shared.get(key);
    if (entry === undefined) {
      entry = {
        key,
        type,
        paramsJson: key,
        upstreamId: undefined,
        established: undefined,
        sinks: new Map(),
      };
      this.shared.set(key, entry);
      this.metrics.upstreamSubscriptions.inc({ network: this.network, type });
      try {
        await this.establish(entry);
      } catch (error) {
        if (entry.sinks.size === 0) this.drop(entry);
        throw error;
      }
    } else if (entry.upstreamId === undefined) {
      await this.waitForUpstreamId(entry);
    }
    return this.clients.add(entry, sink);
  }

  /** The entry's upstream eth_subscribe, shared with every caller that waits for it. */
  private establish(entry: Shared): Promise<void> {
    const established = this.subscribeUpstream(entry);
    entry.established = established;
    return established;
  }

  unsubscribe(clientId: string): boolean {
    const entry = this.clients.remove(clientId);
    if (entry === undefined) return false;
    if (entry.sinks.size === 0) {
      if (entry.upstreamId !== undefined && this.socket?.readyState === WebSocket.OPEN) {
        this.socket.send(
          JSON.stringify({
            jsonrpc: '2.0',
            id: this.nextId++,
            method: 'eth_unsubscribe',
            params: [entry.upstreamId],
          }),
        );
      }
      this.drop(entry);
    }
    return true;
  }

  close(): void {
    this.closed = true;
    this.socket?.terminate();
  }

  private drop(entry: Shared): void {
    if (!this.shared.delete(entry.key)) return;
    if (entry.upstreamId !== undefined) this.byUpstreamId.delete(entry.upstreamId);
    this.metrics.upstreamSubscriptions.dec({ network: this.network, type: entry.type });
  }

  /**
   * A caller whose params an entry already has waits for that entry's eth_subscribe and gets
   * its outcome: the node's refusal (UpstreamSubscribeError, -32602 to the client, unbilled)
   * as the first caller gets it. It polled for the id and failed with a plain Error once the
   * first caller's refusal dropped the entry, which the edge answered "upstream node
   * unavailable" (QA: 93 of 100 identical bad subscriptions).
   */
  private async waitForUpstreamId(entry: Shared): Promise<void> {
    let established = entry.established;
    while (entry.upstreamId === undefined && established !== undefined) {
      await established;
      // A resubscribe may have begun meanwhile (the socket closed): wait for that one.
      if (entry.established === established) break;
      established = entry.established;
    }
    if (entry.upstreamId === undefined) throw new Error('upstream subscription not established');
  }

  private async subscribeUpstream(entry: Shared): Promise<void> {
    const socket = await this.connect();
    const id = this.nextId++;
    const answer = await new Promise<{ result?: unknown; error?: { message?: string } }>(
      (resolve, reject) => {
        const timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new Error('upstream eth_subscribe timed out'));
        }, 10_000);
        this.pending.set(id, (message) => {
          clearTimeout(timer);
          resolve(message);
        });
        socket.send(
          `{"jsonrpc":"2.0","id":${id},"method":"eth_subscribe","params":${entry.paramsJson}}`,
        );
      },
    );
    this.metrics.upstreamSubscribes.inc({ network: this.network, type: entry.type });
    if (typeof answer.result !== 'string')
      throw new UpstreamSubscribeError(
        answer.error?.message ?? 'upstream refused the subscription',
      );
    entry.upstreamId = answer.result;
    this.byUpstreamId.set(answer.result, entry);
  }

  private connect(): Promise<WebSocket> {
    if (this.socket?.readyState === WebSocket.OPEN) return Promise.resolve(this.socket);
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<WebSocket> {
    const tried = new Set<number>();
    if (this.failedIndex !== undefined && this.pool.upstreams.length > 1)
      tried.add(this.failedIndex);
    for (;;) {
      const upstream = this.pool.pick(tried);
      if (upstream === undefined) throw new Error('no upstream accepts WebSocket connections');
      tried.add(upstream.index);
      try {
        const socket = await new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(upstream.spec.wsUrl, { handshakeTimeout: 5_000 });
          ws.once('open', () => resolve(ws));
          ws.once('error', reject);
        });
        socket.on('message', (data) => this.onMessage(data.toString()));
        socket.on('error', () => undefined);
        socket.on('close', () => this.onClose(socket, upstream.index));
        this.socket = socket;
        return socket;
      } catch (error) {
        upstream.healthy = false;
        this.logger.warn(
          { network: this.network, upstream: upstream.index, err: (error as Error).message },
          'upstream WebSocket connect failed',
        );
      }
    }
  }

  private onMessage(text: string): void {
    let message: {
      id?: number;
      method?: string;
      params?: { subscription?: string; result?: unknown };
      result?: unknown;
      error?: { message?: string };
    };
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.method === 'eth_subscription' && message.params?.subscription !== undefined) {
      const entry = this.byUpstreamId.get(message.params.subscription);
      if (entry === undefined) return;
      const resultText = JSON.stringify(message.params.result);
      ClientFanOut.notify(entry, resultText);
      return;
    }
    if (typeof message.id === 'number') {
      const resolve = this.pending.get(message.id);
      this.pending.delete(message.id);
      resolve?.(message);
    }
  }

  private onClose(socket: WebSocket, index: number): void {
    if (this.socket !== socket) return;
    this.socket = undefined;
    for (const resolve of this.pending.values())
      resolve({ error: { message: 'upstream connection closed' } });
    this.pending.clear();
    if (this.closed || this.shared.size === 0) return;
    this.failedIndex = index;
    this.logger.warn(
      { network: this.network, upstream: index, subscriptions: this.shared.size },
      'upstream WebSocket closed; resubscribing elsewhere',
    );
    void this.resubscribeAll();
  }

  private async resubscribeAll(): Promise<void> {
    for (let attempt = 0; !this.closed && this.shared.size > 0; attempt++) {
      this.byUpstreamId.clear();
      try {
        for (const entry of this.shared.values()) {
          entry.upstreamId = undefined;
          await this.establish(entry);
        }
        return;
      } catch (error) {
        this.logger.warn(
          { network: this.network, err: (error as Error).message },
          'resubscribe failed; retrying',
        );
        this.failedIndex = undefined;
        await new Promise((r) => setTimeout(r, Math.min(5_000, 250 * 2 ** attempt)));
      }
    }
  }
}

export class UpstreamSubscribeError extends Error {}

/** The hub of every network of this deployment. */
export class SubscriptionHub implements Subscriptions {
  private readonly networks = new Map<NetworkKey, NetworkSubscriptions>();
  private readonly perAccount = new Map<string, number>();

  constructor(
    private readonly pools: ReadonlyMap<NetworkKey, UpstreamPool>,
    private readonly metrics: GatewayMetrics,
    private readonly logger: Logger,
  ) {}

  of(network: NetworkKey): NetworkSubscriptions | undefined {
    let subs = this.networks.get(network);
    if (subs === undefined) {
      const pool = this.pools.get(network);
      if (pool === undefined || pool.upstreams.length === 0) return undefined;
      subs = new NetworkSubscriptions(network, pool, this.metrics, this.logger);
      this.networks.set(network, subs);
    }
    return subs;
  }

  reserve(accountId: string, limit: number): boolean {
    const count = this.perAccount.get(accountId) ?? 0;
    if (count >= limit) return false;
    this.perAccount.set(accountId, count + 1);
    return true;
  }

  release(accountId: string): void {
    const next = (this.perAccount.get(accountId) ?? 0) - 1;
    if (next <= 0) this.perAccount.delete(accountId);
    else this.perAccount.set(accountId, next);
  }

  close(): void {
    for (const subs of this.networks.values()) subs.close();
  }
}
