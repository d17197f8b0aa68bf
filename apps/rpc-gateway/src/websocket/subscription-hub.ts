import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import type { Logger } from 'pino';
import type { DomainError } from '@meridian/errors';
import { NETWORKS, reorgWindowBlocks, type NetworkKey } from '@meridian/networks';
import { refusal } from '../relay/gateway-errors';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import type { Upstream, UpstreamPool } from '../upstreams/upstream-pool';
import { upstreamLabel } from '../upstreams/upstream-router';
import { lagToleranceBlocks } from '../upstreams/upstream-selector';

/** Where a subscription's notifications go (one client subscription). */
export interface SubscriberSink {
  /**
   * One notification for the subscription `subscriptionId` (the id the hub gave this sink),
   * `resultText` being the notification's result as JSON text; false when the client was cut off.
   */
  notify(subscriptionId: string, resultText: string): boolean;
  /**
   * The subscription cannot go on without a gap the hub will not fill (more than
   * `MAX_BACKFILL_BLOCKS` missed while the upstream was away): the client is told, in its
   * protocol's form, to subscribe again and resync. Optional: a sink without it keeps the
   * subscription and sees the gap.
   */
  end?(subscriptionId: string, missedAbove: number): void;
}

/** Blocks of newHeads a resubscribe fills in at most (ADR 0203 amendment). */
export const MAX_BACKFILL_BLOCKS = 128;
/** Blocks one logs backfill reads at most: the eth_getLogs range cap (ADR 0211). */
export const MAX_BACKFILL_LOG_RANGE = 10_000;
/**
 * JSON bytes of delivered logs a logs subscription (one per distinct filter, shared by its
 * clients) keeps to withdraw them after a reorg in a gap (ADR 0203 amendment "a reorg in a logs
 * gap"). Above it the oldest blocks' logs are forgotten (their hashes kept); the newest block's
 * are always kept. Blocks are kept for the network's reorg window below the newest one
 * (`logMemoryBlocks`).
 */
export const MAX_REMEMBERED_LOG_BYTES = 512 * 1024;

/**
 * Blocks below the newest delivered log's block whose logs a logs subscription remembers: the
 * network's reorg window (`REORG_WINDOW_BLOCKS`, 256 on P), since a reorg within it is one the
 * fill must withdraw; a deeper one is not withdrawn (ADR 0203). Not `MAX_BACKFILL_BLOCKS`: that
 * caps how many missed headers a newHeads fill fetches, not how deep a reorg may be. At least 1
 * (S has no reorgs, and no WebSocket either).
 */
export function logMemoryBlocks(network: NetworkKey): number {
  return Math.max(1, reorgWindowBlocks(network));
}

/**
 * How the hub tells a silent upstream socket (no close, no data) from a quiet one (ADR 0203
 * amendment "silent upstream"). Every `checkIntervalMs` it checks its socket; a socket found
 * silent is terminated, which runs the reconnect-and-backfill path of a dropped one.
 */
export interface HubLiveness {
  /** Milliseconds now; tests inject a fake clock. */
  readonly now: () => number;
  /** How often the socket is checked and pinged; 0: never by itself (tests call `checkLiveness`). */
  readonly checkIntervalMs: number;
  /** A WebSocket ping unanswered this long means the socket is dead. */
  readonly pongTimeoutMs: number;
}

export const DEFAULT_HUB_LIVENESS: HubLiveness = {
  now: Date.now,
  checkIntervalMs: 5_000,
  pongTimeoutMs: 10_000,
};

/** The hub's liveness settings from the app's config. */
export function hubLiveness(config: {
  WS_UPSTREAM_CHECK_MS: number;
  WS_UPSTREAM_PONG_TIMEOUT_MS: number;
}): Partial<HubLiveness> {
  return {
    checkIntervalMs: config.WS_UPSTREAM_CHECK_MS,
    pongTimeoutMs: config.WS_UPSTREAM_PONG_TIMEOUT_MS,
  };
}

/** How long the pool's head may run ahead of the hub's last notified head, in time. */
const HEAD_LAG_TOLERANCE_MS = 20_000;

/**
 * Blocks the pool's known head (health checks) may pass the last head the hub notified before
 * its socket counts as silent: about 20 s of the network's blocks, at least 2 (the health check
 * and the notification of one block race): E 2, P 10, R 20.
 */
export function headLagMargin(network: NetworkKey): number {
  return Math.max(2, lagToleranceBlocks(NETWORKS[network].blockTimeMs, HEAD_LAG_TOLERANCE_MS));
}

/** Why the hub gave its upstream socket up without the node closing it. */
export type SilentReason = 'unhealthy' | 'behind_pool_head' | 'ping_unanswered';

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

  /** Every client of the entry missed more than `missedAbove` blocks (`SubscriberSink.end`). */
  static end(entry: { readonly sinks: Map<string, SubscriberSink> }, missedAbove: number): void {
    for (const [clientId, sink] of entry.sinks) sink.end?.(clientId, missedAbove);
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
  /** What was delivered, to fill the gap a resubscribe leaves (ADR 0203 amendment). */
  readonly gap: GapState;
}

interface Header {
  number: number;
  hash: string;
}

/**
 * logs: one block whose logs were delivered: its hash and those logs as sent (JSON text by
 * `logKey`), or undefined once forgotten for `MAX_REMEMBERED_LOG_BYTES` (the hash is kept).
 */
interface LogBlock {
  readonly hash: string;
  logs: Map<string, string> | undefined;
}

interface GapState {
  /** The head when the upstream subscription was first made: nothing before it is owed. */
  startHead: number | undefined;
  /** newHeads: the hashes of the last headers delivered, by number (at most the cap). */
  readonly heads: Map<number, string>;
  lastHead: Header | undefined;
  /**
   * logs: the blocks logs were delivered from, by number, within `logWindow` of the newest (a
   * reorg in a gap withdraws their logs), and the JSON bytes of the logs kept.
   */
  readonly logBlocks: Map<number, LogBlock>;
  /** logs: how many blocks below the newest `logBlocks` keeps (`logMemoryBlocks`). */
  readonly logWindow: number;
  logBytes: number;
  /** logs: every log delivered from this block on is in `logBlocks` (older ones aged out). */
  logFloor: number;
  /** The network head known when the upstream went away (logs of blocks below it are in). */
  closedAtHead: number | undefined;
  /** The network's delivered headers when the upstream went away (a logs fill's fork finding). */
  headsAtClose: ReadonlyMap<number, string> | undefined;
  /** Set while a resubscribe fills the gap: new notifications wait behind it. */
  queued: Array<Record<string, unknown>> | undefined;
}

const hexOf = (n: number) => `0x${n.toString(16)}`;
/** Ascending numbers. */
const ascending = (a: number, b: number) => a - b;
const logKey = (log: Record<string, unknown>) => `${String(log.blockHash)}:${String(log.logIndex)}`;
/**
 * The fork in a gap (ADR 0203 amendment): walks the blocks `known` was delivered from (number →
 * hash), newest first, down to the newest still on the node's chain (`canonical`, undefined when
 * none is); `replaced` are the ones above it, ascending. One eth_getBlockByNumber per block
 * walked: one when nothing was reorganised.
 */
export async function findFork(
  known: ReadonlyMap<number, string>,
  blockAt: (n: number) => Promise<Record<string, unknown> | null>,
): Promise<{ canonical: number | undefined; replaced: number[] }> {
  const replaced: number[] = [];
  for (const n of [...known.keys()].sort(ascending).reverse()) {
    const block = await blockAt(n);
    if (block !== null && block.hash === known.get(n))
      return { canonical: n, replaced: replaced.reverse() };
    replaced.push(n);
  }
  return { canonical: undefined, replaced: replaced.reverse() };
}

/** A block as eth_getBlockByNumber gives it, as a newHeads header (no body fields). */
function headerOf(block: Record<string, unknown>): Record<string, unknown> {
  const { transactions: _t, uncles: _u, withdrawals: _w, size: _s, ...header } = block;
  return header;
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
  /** The newest head a newHeads subscription of this network delivered. */
  private seenHead: number | undefined;
  /** The hashes of the network's last headers delivered, by number (at most the cap). */
  private readonly seenHeads = new Map<number, string>();
  /** The node of the open socket. */
  private upstream: Upstream | undefined;
  /** Set while a resubscribe runs: its own calls time out, the liveness rules wait. */
  private resubscribing = false;
  /** When clients were last notified (or the first upstream subscription was made). */
  private lastNotifiedAt: number | undefined;
  /** When the unanswered ping was sent; undefined when none is out. */
  private pingSentAt: number | undefined;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly liveness: HubLiveness;
  private readonly headMargin: number;

  constructor(
    private readonly network: NetworkKey,
    private readonly pool: UpstreamPool,
    private readonly metrics: GatewayMetrics,
    private readonly logger: Logger,
    liveness: Partial<HubLiveness> = {},
  ) {
    this.liveness = {
      now: liveness.now ?? DEFAULT_HUB_LIVENESS.now,
      checkIntervalMs: liveness.checkIntervalMs ?? DEFAULT_HUB_LIVENESS.checkIntervalMs,
      pongTimeoutMs: liveness.pongTimeoutMs ?? DEFAULT_HUB_LIVENESS.pongTimeoutMs,
    };
    this.headMargin = headLagMargin(network);
    if (this.liveness.checkIntervalMs > 0) {
      this.timer = setInterval(() => this.checkLiveness(), this.liveness.checkIntervalMs);
      this.timer.unref();
    }
    metrics.watchSubscriptionHub(network, () =>
      this.shared.size === 0 || this.lastNotifiedAt === undefined
        ? undefined
        : (this.liveness.now() - this.lastNotifiedAt) / 1_000,
    );
  }

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
        gap: {
          startHead: undefined,
          heads: new Map(),
          lastHead: undefined,
          logBlocks: new Map(),
          logWindow: logMemoryBlocks(this.network),
          logBytes: 0,
          logFloor: 0,
          closedAtHead: undefined,
          headsAtClose: undefined,
          queued: undefined,
        },
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
    clearInterval(this.timer);
    this.metrics.watchSubscriptionHub(this.network, undefined);
    this.socket?.terminate();
  }

  /**
   * A socket that stopped sending without closing (a blackholed node) is given up, so the
   * reconnect and backfill of a dropped socket run (ADR 0203 amendment "silent upstream"): its
   * node turned unhealthy while another is healthy, or the pool's head passed the last head
   * notified by more than `headLagMargin`, or a ping went unanswered for `pongTimeoutMs`. Runs
   * every `checkIntervalMs`; not while a resubscribe runs (its calls have their own timeouts).
   */
  checkLiveness(): SilentReason | undefined {
    const socket = this.socket;
    const upstream = this.upstream;
    if (this.closed || this.resubscribing || socket === undefined || upstream === undefined)
      return undefined;
    if (socket.readyState !== WebSocket.OPEN || this.shared.size === 0) return undefined;
    const reason = this.silentReason(upstream);
    if (reason !== undefined) {
      this.abandon(socket, upstream, reason);
      return reason;
    }
    if (this.pingSentAt === undefined) {
      this.pingSentAt = this.liveness.now();
      socket.ping();
    }
    return undefined;
  }

  private silentReason(upstream: Upstream): SilentReason | undefined {
    if (!upstream.healthy && this.pool.upstreams.some((u) => u !== upstream && u.healthy))
      return 'unhealthy';
    const poolHead = this.pool.headHeight;
    const notified = this.notifiedHead();
    if (poolHead !== undefined && notified !== undefined && poolHead - notified > this.headMargin)
      return 'behind_pool_head';
    if (
      this.pingSentAt !== undefined &&
      this.liveness.now() - this.pingSentAt >= this.liveness.pongTimeoutMs
    )
      return 'ping_unanswered';
    return undefined;
  }

  /**
   * The newest head the newHeads subscriptions now open notified (or, before any, the head when
   * they began); undefined without one. Not `seenHead`, which outlives them: a newHeads
   * subscription made an hour after the last one ended is not an hour behind.
   */
  private notifiedHead(): number | undefined {
    let newest: number | undefined;
    for (const entry of this.shared.values()) {
      if (entry.type !== 'newHeads') continue;
      const head = entry.gap.lastHead?.number ?? entry.gap.startHead;
      if (head !== undefined && (newest === undefined || head > newest)) newest = head;
    }
    return newest;
  }

  private abandon(socket: WebSocket, upstream: Upstream, reason: SilentReason): void {
    this.logger.warn(
      {
        network: this.network,
        upstream: upstreamLabel(upstream),
        reason,
        notifiedHead: this.notifiedHead(),
        poolHead: this.pool.headHeight,
      },
      'upstream WebSocket silent; closing it to resubscribe elsewhere',
    );
    this.metrics.subscriptionUpstreamAbandoned.inc({ network: this.network, reason });
    // terminate() destroys the TCP socket at once (no closing handshake a silent node would
    // never answer); its 'close' runs onClose, the path of a dropped socket.
    socket.terminate();
  }

  private drop(entry: Shared): void {
    if (!this.shared.delete(entry.key)) return;
    if (this.shared.size === 0) this.lastNotifiedAt = undefined;
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
    this.lastNotifiedAt ??= this.liveness.now();
    if (typeof answer.result !== 'string')
      throw new UpstreamSubscribeError(
        answer.error?.message ?? 'upstream refused the subscription',
      );
    entry.upstreamId = answer.result;
    this.byUpstreamId.set(answer.result, entry);
    // Where the subscription began: a gap is counted from here until something is delivered.
    // Not awaited (the client's answer does not wait for it); unknown, a gap is not filled.
    if (entry.gap.startHead === undefined)
      this.request(socket, 'eth_getBlockByNumber', ['latest', false]).then(
        (head) => (entry.gap.startHead ??= Number((head as { number: string }).number)),
        () => undefined,
      );
  }

  /** One JSON-RPC call on the upstream socket; its result, or an Error. */
  private request(socket: WebSocket, method: string, params: unknown[]): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`upstream ${method} timed out`));
      }, 10_000);
      this.pending.set(id, (message) => {
        clearTimeout(timer);
        if (message.error !== undefined || message.result === undefined)
          reject(new Error(message.error?.message ?? `upstream ${method} failed`));
        else resolve(message.result);
      });
      socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
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
        socket.on('pong', () => (this.pingSentAt = undefined));
        socket.on('error', () => undefined);
        socket.on('close', () => this.onClose(socket, upstream));
        this.socket = socket;
        this.upstream = upstream;
        this.pingSentAt = undefined;
        this.metrics.subscriptionUpstream.set(
          { network: this.network, upstream: upstreamLabel(upstream) },
          1,
        );
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
      const result = message.params.result as Record<string, unknown>;
      if (entry.gap.queued !== undefined) entry.gap.queued.push(result);
      else this.deliver(entry, result);
      return;
    }
    if (typeof message.id === 'number') {
      const resolve = this.pending.get(message.id);
      this.pending.delete(message.id);
      resolve?.(message);
    }
  }

  private onClose(socket: WebSocket, upstream: Upstream): void {
    if (this.socket !== socket) return;
    const index = upstream.index;
    this.forgetSocket(upstream);
    for (const resolve of this.pending.values())
      resolve({ error: { message: 'upstream connection closed' } });
    this.pending.clear();
    if (this.closed || this.shared.size === 0) return;
    // Taken once per gap: a retry's close must not see headers the fill already replaced.
    const heads = new Map(this.seenHeads);
    for (const entry of this.shared.values()) {
      entry.gap.closedAtHead = this.seenHead;
      if (entry.type === 'logs' && entry.gap.queued === undefined) entry.gap.headsAtClose = heads;
      entry.gap.queued ??= [];
    }
    this.failedIndex = index;
    this.logger.warn(
      { network: this.network, upstream: index, subscriptions: this.shared.size },
      'upstream WebSocket closed; resubscribing elsewhere',
    );
    void this.resubscribeAll();
  }

  private forgetSocket(upstream: Upstream): void {
    this.socket = undefined;
    this.upstream = undefined;
    this.pingSentAt = undefined;
    this.metrics.subscriptionUpstream.remove({
      network: this.network,
      upstream: upstreamLabel(upstream),
    });
  }

  private async resubscribeAll(): Promise<void> {
    this.resubscribing = true;
    try {
      await this.resubscribeUntilDone();
    } finally {
      this.resubscribing = false;
    }
  }

  private async resubscribeUntilDone(): Promise<void> {
    for (let attempt = 0; !this.closed && this.shared.size > 0; attempt++) {
      this.byUpstreamId.clear();
      try {
        for (const entry of this.shared.values()) {
          entry.upstreamId = undefined;
          await this.establish(entry);
        }
        const socket = await this.connect();
        for (const entry of this.shared.values()) await this.backfill(socket, entry);
        return;
      } catch (error) {
        this.logger.warn(
          { network: this.network, err: (error as Error).message },
          'resubscribe failed; retrying',
        );
        this.failedIndex = undefined;
        // A socket that opened but whose calls timed out is as silent as the one given up:
        // the next attempt connects afresh instead of waiting on it again.
        const stale = this.socket;
        if (stale !== undefined && this.upstream !== undefined) {
          this.failedIndex = this.upstream.index;
          this.forgetSocket(this.upstream);
          stale.terminate();
        }
        await new Promise((r) => setTimeout(r, Math.min(5_000, 250 * 2 ** attempt)));
      }
    }
  }

  /** One notification to the entry's clients, noted for a later gap. */
  private deliver(entry: Shared, result: Record<string, unknown>): void {
    const gap = entry.gap;
    this.lastNotifiedAt = this.liveness.now();
    const text = JSON.stringify(result);
    if (entry.type === 'newHeads' && typeof result.number === 'string') {
      const number = Number(result.number);
      gap.lastHead = { number, hash: String(result.hash) };
      gap.heads.set(number, String(result.hash));
      gap.heads.delete(number - MAX_BACKFILL_BLOCKS);
      this.seenHeads.set(number, String(result.hash));
      this.seenHeads.delete(number - MAX_BACKFILL_BLOCKS);
      if (this.seenHead === undefined || number > this.seenHead) this.seenHead = number;
    } else if (entry.type === 'logs' && typeof result.blockNumber === 'string') {
      rememberLog(gap, result, text);
    }
    ClientFanOut.notify(entry, text);
  }

  /**
   * After a resubscribe: delivers, in order, what was mined while the upstream was away, then
   * what the new upstream subscription sent meanwhile, without repeating anything delivered
   * (ADR 0203 amendment). newHeads: every header from the last one delivered + 1 to the head; a
   * delivered header whose block was replaced (a reorg in the gap) is followed by the new
   * chain's headers from the fork on, as geth does. logs: the fork is found among the blocks
   * logs were delivered from and the network's delivered headers (`findFork`, newHeads' too);
   * every delivered log of a replaced block is sent again with `removed: true`, then one
   * eth_getLogs with the subscription's filter from the fork + 1 (or the first block not known
   * delivered) to the head, less the logs already delivered. A gap above the cap ends the
   * subscriptions instead.
   */
  private async backfill(socket: WebSocket, entry: Shared): Promise<void> {
    const gap = entry.gap;
    const call = (method: string, params: unknown[]) => this.request(socket, method, params);
    const blockAt = async (n: number) =>
      (await call('eth_getBlockByNumber', [hexOf(n), false])) as Record<string, unknown> | null;
    const latest = (await call('eth_getBlockByNumber', ['latest', false])) as { number: string };
    const head = Number(latest.number);
    const skip = new Set<string>();
    if (entry.type === 'newHeads') {
      const floor = head - MAX_BACKFILL_BLOCKS;
      const known = new Map([...gap.heads].filter(([n]) => n > floor));
      const fork = await findFork(known, blockAt);
      let from =
        fork.canonical !== undefined
          ? fork.canonical + 1
          : (fork.replaced[0] ?? (gap.lastHead?.number ?? gap.startHead ?? head) + 1);
      if (head - from + 1 > MAX_BACKFILL_BLOCKS) {
        this.endAll(entry, head, MAX_BACKFILL_BLOCKS);
        from = head + 1;
      }
      for (let n = from; n <= head; n++) {
        const block = await blockAt(n);
        if (block !== null) this.deliver(entry, headerOf(block));
      }
    } else if (entry.type === 'logs') {
      let from = await this.withdrawReplacedLogs(entry, head, blockAt);
      if (from !== undefined && head - from + 1 > MAX_BACKFILL_LOG_RANGE) {
        this.endAll(entry, head, MAX_BACKFILL_LOG_RANGE);
        from = undefined;
      }
      if (from !== undefined && from <= head) {
        const params = JSON.parse(entry.paramsJson) as unknown[];
        const filter = Object.assign({}, params[1], {
          fromBlock: hexOf(from),
          toBlock: hexOf(head),
        });
        const logs = (await call('eth_getLogs', [filter])) as Array<Record<string, unknown>>;
        for (const log of logs) {
          if (skip.has(logKey(log)) || isRemembered(gap, log)) continue;
          skip.add(logKey(log));
          this.deliver(entry, log);
        }
      }
    }
    entry.gap.headsAtClose = undefined;
    this.drainQueue(entry, skip);
  }

  /**
   * A logs gap: finds the fork among the blocks logs were delivered from and the network's
   * headers delivered before the drop, withdraws (`removed: true`, geth's shape and order:
   * ascending) every delivered log of a block no longer on the chain, and returns the first
   * block to read again: the fork + 1 after a reorg, else the first block not known delivered
   * (the block of the last log, read again, or the one after the last head the network's
   * newHeads delivered but one). Undefined: nothing to read (the clients were ended).
   */
  private async withdrawReplacedLogs(
    entry: Shared,
    head: number,
    blockAt: (n: number) => Promise<Record<string, unknown> | null>,
  ): Promise<number | undefined> {
    const gap = entry.gap;
    const known = new Map<number, string>();
    for (const [n, hash] of gap.headsAtClose ?? [])
      if (n > head - MAX_BACKFILL_BLOCKS) known.set(n, hash);
    for (const [n, block] of gap.logBlocks) known.set(n, block.hash);
    const fork = await findFork(known, blockAt);
    const owedFrom = Math.max(gap.logFloor, (gap.startHead ?? head) + 1);
    if (fork.replaced.length === 0) {
      const covered = Math.max(gap.startHead ?? head, (gap.closedAtHead ?? 0) - 1);
      const lastLogBlock = Math.max(-1, ...gap.logBlocks.keys());
      return lastLogBlock >= covered ? lastLogBlock : covered + 1;
    }
    const withdrawn = fork.replaced.filter((n) => gap.logBlocks.has(n));
    if (withdrawn.some((n) => gap.logBlocks.get(n)!.logs === undefined)) {
      // Logs delivered from a replaced block that the hub no longer holds: it cannot withdraw
      // them, so the clients resync (the count is the blocks from the fork to the head).
      this.endAll(entry, head, head - (fork.canonical ?? fork.replaced[0]! - 1));
      return undefined;
    }
    for (const n of withdrawn) {
      const block = gap.logBlocks.get(n)!;
      forgetLogBlock(gap, n);
      for (const text of block.logs!.values())
        this.deliver(
          entry,
          Object.assign(JSON.parse(text) as Record<string, unknown>, { removed: true }),
        );
    }
    // Every known block replaced: the fork is below all of them, but no deeper than the
    // network's reorg window under the head (a deeper one is not withdrawn either, ADR 0203), so
    // the read starts there, not at the subscription's start (QA OO: a 3-block reorg ended a
    // logs subscription older than the 10,000-block cap).
    const forkAfter =
      fork.canonical !== undefined
        ? fork.canonical + 1
        : Math.min(fork.replaced[0]!, head - reorgWindowBlocks(this.network));
    return Math.max(owedFrom, forkAfter);
  }

  /** The notifications the new upstream subscription sent during the backfill, less repeats. */
  private drainQueue(entry: Shared, delivered: ReadonlySet<string>): void {
    const queued = entry.gap.queued ?? [];
    entry.gap.queued = undefined;
    for (const result of queued) {
      if (entry.type === 'newHeads') {
        const number = Number(result.number);
        if (entry.gap.heads.get(number) === result.hash) continue;
      } else if (entry.type === 'logs') {
        // A log already delivered, or the withdrawal of one never delivered (or withdrawn).
        const known = isRemembered(entry.gap, result) || delivered.has(logKey(result));
        if (known !== (result.removed === true)) continue;
      }
      this.deliver(entry, result);
    }
  }

  /** A gap above the cap: every client of the entry is told to subscribe again and resync. */
  private endAll(entry: Shared, head: number, cap: number): void {
    this.logger.warn(
      { network: this.network, type: entry.type, head, cap, clients: entry.sinks.size },
      'upstream gap above the backfill cap; clients told to resync',
    );
    ClientFanOut.end(entry, cap);
    // A sink that cannot be told goes on from the head, as before this rule.
    entry.gap.lastHead = undefined;
    entry.gap.heads.clear();
    entry.gap.logBlocks.clear();
    entry.gap.logBytes = 0;
    entry.gap.logFloor = head + 1;
    entry.gap.startHead = head;
  }
}

/**
 * A log delivered (or withdrawn, `removed: true`) on a logs subscription, noted for a reorg in a
 * later gap: by block (its hash) and `logKey`, at most `gap.logWindow` blocks below the newest
 * and `MAX_REMEMBERED_LOG_BYTES` of logs (the oldest forgotten first, hashes kept).
 */
function rememberLog(gap: GapState, log: Record<string, unknown>, text: string): void {
  const number = Number(log.blockNumber);
  const hash = String(log.blockHash);
  let block = gap.logBlocks.get(number);
  if (log.removed === true) {
    const sent = block?.hash === hash ? block.logs?.get(logKey(log)) : undefined;
    if (sent === undefined) return;
    block!.logs!.delete(logKey(log));
    gap.logBytes -= sent.length;
    if (block!.logs!.size === 0) forgetLogBlock(gap, number);
    return;
  }
  if (block === undefined || block.hash !== hash) {
    if (block !== undefined) forgetLogBlock(gap, number);
    block = { hash, logs: new Map() };
    gap.logBlocks.set(number, block);
    for (const n of gap.logBlocks.keys())
      if (n <= number - gap.logWindow) {
        forgetLogBlock(gap, n);
        gap.logFloor = Math.max(gap.logFloor, n + 1);
      }
  }
  if (block.logs === undefined || block.logs.has(logKey(log))) return;
  block.logs.set(logKey(log), text);
  gap.logBytes += text.length;
  // Over the bytes: the oldest blocks' logs (in arrival order) go, never this block's.
  for (const [n, older] of gap.logBlocks) {
    if (gap.logBytes <= MAX_REMEMBERED_LOG_BYTES) break;
    if (n === number || older.logs === undefined) continue;
    for (const sent of older.logs.values()) gap.logBytes -= sent.length;
    older.logs = undefined;
  }
}

/** Drops a block from the logs a subscription remembers. */
function forgetLogBlock(gap: GapState, number: number): void {
  for (const sent of gap.logBlocks.get(number)?.logs?.values() ?? []) gap.logBytes -= sent.length;
  gap.logBlocks.delete(number);
}

/** The log (same block hash and index) was delivered and not withdrawn. */
function isRemembered(gap: GapState, log: Record<string, unknown>): boolean {
  const block = gap.logBlocks.get(Number(log.blockNumber));
  return (
    block !== undefined && block.hash === log.blockHash && block.logs?.has(logKey(log)) === true
  );
}

export class UpstreamSubscribeError extends Error {}

/**
 * A subscription whose upstream gap was above the backfill cap (ADR 0203 amendment): -32000,
 * retryable; the WebSocket edge sends it and closes the connection so the client resyncs.
 */
export function subscriptionGap(subscriptionId: string, cap: number): DomainError {
  return refusal(
    'subscription_gap',
    'unavailable',
    `subscription ${subscriptionId} missed more than ${cap} blocks while its upstream node ` +
      'was away; subscribe again and resync',
  );
}

/** The hub of every network of this deployment. */
export class SubscriptionHub implements Subscriptions {
  private readonly networks = new Map<NetworkKey, NetworkSubscriptions>();
  private readonly perAccount = new Map<string, number>();

  constructor(
    private readonly pools: ReadonlyMap<NetworkKey, UpstreamPool>,
    private readonly metrics: GatewayMetrics,
    private readonly logger: Logger,
    private readonly liveness: Partial<HubLiveness> = {},
  ) {}

  of(network: NetworkKey): NetworkSubscriptions | undefined {
    let subs = this.networks.get(network);
    if (subs === undefined) {
      const pool = this.pools.get(network);
      if (pool === undefined || pool.upstreams.length === 0) return undefined;
      subs = new NetworkSubscriptions(network, pool, this.metrics, this.logger, this.liveness);
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
