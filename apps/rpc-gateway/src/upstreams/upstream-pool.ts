import { Pool } from 'undici';
import type { NetworkKey } from '@meridian/networks';
import type { AnswerRead } from './answer-budget';
import type { UpstreamSpec } from './upstream-config';
import {
  type BreakerAdmission,
  type BreakerChange,
  type BreakerSettings,
  DEFAULT_BREAKER,
  UpstreamBreaker,
} from './upstream-breaker';
import { selectUpstream, type UpstreamStatus } from './upstream-selector';
import { classifyTransportError, type FailureKind } from './send-policy';

/** One exchange's outcome: the answer text, or a classified failure. */
export type PostOutcome =
  { ok: true; text: string } | { ok: false; failure: FailureKind; reason: string };

/** How a node is reached: HTTP through undici (`HttpTransport`); tests give their own. */
export interface UpstreamTransport {
  /**
   * `maxBytes`: the most of the answer's body read; past it the read stops (the stream is
   * destroyed, nothing more is kept) and the outcome is `too_large` (ADR 0215). `read`: the
   * body's hold on the worker's budget of answers in flight, grown chunk by chunk; when it
   * cannot grow the read stops the same way and the outcome is `busy` (ADR 0215 amendment).
   */
  post(body: string, timeoutMs: number, maxBytes: number, read?: AnswerRead): Promise<PostOutcome>;
  close(): Promise<void>;
}

export class Upstream implements UpstreamStatus {
  healthy = true;
  height: number | undefined = undefined;
  inFlight = 0;
  lastError: string | undefined;
  /** Metrics label `<index>:<host>`. */
  readonly label: string;
  readonly breaker: UpstreamBreaker;

  constructor(
    readonly index: number,
    readonly spec: UpstreamSpec,
    private readonly transport: UpstreamTransport,
    breaker: BreakerSettings = DEFAULT_BREAKER,
  ) {
    this.label = `${index}:${new URL(spec.url).host}`;
    this.breaker = new UpstreamBreaker(breaker);
  }

  /** One exchange; never throws. */
  async post(
    body: string,
    timeoutMs: number,
    maxBytes: number,
    read?: AnswerRead,
  ): Promise<PostOutcome> {
    this.inFlight++;
    try {
      return await this.transport.post(body, timeoutMs, maxBytes, read);
    } finally {
      this.inFlight--;
    }
  }

  /**
   * The head this node showed in an answer (eth_blockNumber, a 'latest' block): what routing
   * knows of it until its next health check or answer, lower than before too (QA: a node
   * checked at the pool's height answered a head three blocks lower).
   */
  showedHeight(height: number): void {
    this.height = height;
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}

/** A node over HTTP: one undici Pool. */
export class HttpTransport implements UpstreamTransport {
  readonly pool: Pool;
  private readonly path: string;

  constructor(url: string, connections: number) {
    const parsed = new URL(url);
    this.path = `${parsed.pathname}${parsed.search}`;
    this.pool = new Pool(parsed.origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connect: { timeout: 2_000 },
    });
  }

  /**
   * One HTTP exchange; resolves to the answer text or a classified failure. Never throws.
   * Uses undici's `dispatch` with a collecting handler rather than `request` (no body stream,
   * no extra promise chain): measured about a quarter less CPU per exchange. The body is read
   * up to `maxBytes`: the chunk that passes it aborts the exchange (undici destroys the socket)
   * and nothing more is kept (QA: a 554 MB batch answer was collected whole, and its
   * concatenation threw ERR_STRING_TOO_LONG, which opened the node's breaker). Each chunk
   * also grows `read`, the body's hold on the worker's budget of answers in flight: a chunk it
   * cannot hold stops the read the same way, outcome `busy` (ADR 0215 amendment).
   */
  post(body: string, timeoutMs: number, maxBytes: number, read?: AnswerRead): Promise<PostOutcome> {
    return new Promise((resolve) => {
      let status = 0;
      let received = 0;
      const chunks: Buffer[] = [];
      let done = false;
      const settle = (outcome: PostOutcome) => {
        if (done) return;
        done = true;
        resolve(outcome);
      };
      try {
        this.pool.dispatch(
          {
            path: this.path,
            method: 'POST',
            headers: JSON_HEADERS,
            body,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
          },
          {
            // undici treats a handler without onRequestStart as the legacy (onConnect…) kind.
            onRequestStart: () => undefined,
            onResponseStart: (_controller, statusCode) => {
              status = statusCode;
            },
            onResponseData: (controller, chunk) => {
              if (done) return;
              received += chunk.length;
              if (received > maxBytes) {
                chunks.length = 0;
                settle(tooLarge(maxBytes));
                controller.abort(new Error('answer too large'));
                return;
              }
              if (read !== undefined && !read.grow(chunk.length)) {
                chunks.length = 0;
                settle(BUSY);
                controller.abort(new Error('answers in flight over budget'));
                return;
              }
              chunks.push(chunk);
            },
            onResponseEnd: () => {
              if (done) return;
              const text =
                chunks.length === 1
                  ? chunks[0]!.toString('utf8')
                  : Buffer.concat(chunks).toString('utf8');
              // The provider's node throttled, whatever its body says: not an answer (QA).
              if (status === 429)
                return settle({ ok: false, failure: 'throttled', reason: 'HTTP 429' });
              if (status >= 500)
                return settle({ ok: false, failure: 'bad_answer', reason: `HTTP ${status}` });
              if (status >= 400 && !text.startsWith('{') && !text.startsWith('['))
                return settle({ ok: false, failure: 'bad_answer', reason: `HTTP ${status}` });
              settle({ ok: true, text });
            },
            onResponseError: (_controller, error) => settle(failureOf(error)),
          },
        );
      } catch (error) {
        settle(failureOf(error));
      }
    });
  }

  async close(): Promise<void> {
    await this.pool.destroy().catch(() => undefined);
  }
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * A read stopped because the worker's budget of answers in flight could not hold the body
 * (not a failure of the node; ADR 0215 amendment).
 */
export const BUSY: PostOutcome = {
  ok: false,
  failure: 'busy',
  reason: 'answers in flight over budget',
};

/** An answer whose read was stopped past `maxBytes` (not a failure of the node). */
export function tooLarge(maxBytes: number): PostOutcome {
  return { ok: false, failure: 'too_large', reason: `answer over ${maxBytes} bytes` };
}

function failureOf(error: unknown): { ok: false; failure: FailureKind; reason: string } {
  return {
    ok: false,
    failure: classifyTransportError(error),
    reason: (error as { code?: string }).code ?? (error as Error).message,
  };
}

export interface PoolOptions {
  /** The network's lag tolerance in blocks (`lagToleranceBlocks`). */
  maxLagBlocks: number;
  connections: number;
  breaker?: BreakerSettings;
  /** The breakers' clock (ms). */
  now?: () => number;
  /** Builds a node's transport (tests: a scripted node); HTTP by default. */
  transport?: (spec: UpstreamSpec) => UpstreamTransport;
}

/** An attempt the breaker let through: its outcome goes back to `settle`. */
export interface Attempt {
  readonly upstream: Upstream;
  readonly admission: BreakerAdmission;
}

/** Hears every change of a node's breaker (the router's log line and gauge). */
export type BreakerListener = (
  upstream: Upstream,
  change: BreakerChange,
  details: { reason: string | undefined; cooldownMs: number },
) => void;

/** The reason of a close by a passing health check (a trial's close has none). */
export const CLOSED_BY_CHECK = 'health check passed, no call tried since it opened';

/** The upstream nodes of one network in this region. */
export class UpstreamPool {
  readonly upstreams: Upstream[];
  private cursor = 0;
  private readonly now: () => number;
  private readonly listeners: BreakerListener[] = [];

  constructor(
    readonly network: NetworkKey,
    specs: readonly UpstreamSpec[],
    private readonly options: PoolOptions,
  ) {
    this.now = options.now ?? Date.now;
    const transport =
      options.transport ??
      ((spec: UpstreamSpec) => new HttpTransport(spec.url, options.connections));
    this.upstreams = specs.map(
      (spec, index) => new Upstream(index, spec, transport(spec), options.breaker),
    );
  }

  get maxLagBlocks(): number {
    return this.options.maxLagBlocks;
  }

  /**
   * The node the next attempt would go to, without claiming a half-open breaker's trial (the
   * subscription hub's choice of a node for a WebSocket).
   */
  pick(exclude?: ReadonlySet<number>): Upstream | undefined {
    const index = this.select(exclude);
    return index === undefined ? undefined : this.upstreams[index];
  }

  /** The next attempt of a call: a node its breaker lets through now, or none. */
  attempt(exclude?: ReadonlySet<number>): Attempt | undefined {
    const index = this.select(exclude);
    return index === undefined ? undefined : this.admit(this.upstreams[index]!);
  }

  /** An attempt at this node (a filter's own), if its breaker lets one through now. */
  admit(upstream: Upstream): Attempt | undefined {
    const now = this.now();
    if (!this.mayAsk(upstream, now)) return undefined;
    const admission = upstream.breaker.admit(now);
    return admission === undefined ? undefined : { upstream, admission };
  }

  /**
   * The outcome of an attempt: `ok` when the node answered (even "I lack that block"); a
   * failure counts towards opening its breaker. `reason`: the failure, for the log line.
   */
  settle(attempt: Attempt, ok: boolean, reason?: string): void {
    const { upstream } = attempt;
    const change = upstream.breaker.record(this.now(), ok, attempt.admission);
    if (change !== undefined) this.notify(upstream, change, reason);
  }

  private notify(upstream: Upstream, change: BreakerChange, reason: string | undefined): void {
    for (const listener of this.listeners)
      listener(upstream, change, { reason, cooldownMs: upstream.breaker.cooldownMs });
  }

  /** A failed health check: a failed attempt to the breaker (a passing one proves no call). */
  checkFailed(upstream: Upstream, reason: string | undefined): void {
    this.settle({ upstream, admission: 'send' }, false, reason);
  }

  /**
   * A passing health check: closes the node's breaker if its cooldown is over and no call has
   * been tried on it since it opened (`UpstreamBreaker.checkPassed`).
   */
  checkPassed(upstream: Upstream): void {
    const change = upstream.breaker.checkPassed(this.now());
    if (change !== undefined) this.notify(upstream, change, CLOSED_BY_CHECK);
  }

  onBreakerChange(listener: BreakerListener): void {
    this.listeners.push(listener);
  }

  byTag(tag: string): Upstream | undefined {
    return this.upstreams.find((u) => u.spec.tag === tag);
  }

  byFloorTag(tag: string): Upstream | undefined {
    return this.upstreams.find((u) => u.spec.floorTag === tag);
  }

  /** Best height among healthy nodes whose breaker is not open. */
  get headHeight(): number | undefined {
    const now = this.now();
    let best: number | undefined;
    for (const u of this.upstreams)
      if (
        u.healthy &&
        u.height !== undefined &&
        (best === undefined || u.height > best) &&
        this.mayAsk(u, now)
      )
        best = u.height;
    return best;
  }

  async close(): Promise<void> {
    await Promise.all(this.upstreams.map((u) => u.close()));
  }

  private select(exclude: ReadonlySet<number> | undefined): number | undefined {
    const now = this.now();
    return selectUpstream(this.upstreams, {
      exclude,
      maxLagBlocks: this.options.maxLagBlocks,
      cursor: this.cursor++,
      usable: (index) => this.mayAsk(this.upstreams[index]!, now),
    });
  }

  /**
   * Whether a call may go to this node now: its breaker is closed, or its cooldown is over and
   * the node passed its last health check (a node still failing its checks is still down: no
   * call waits out the timeout as its trial; QA's hung nodes).
   */
  private mayAsk(upstream: Upstream, now: number): boolean {
    const state = upstream.breaker.stateAt(now);
    return state === 'closed' || (upstream.healthy && upstream.breaker.mayTry(now));
  }
}
