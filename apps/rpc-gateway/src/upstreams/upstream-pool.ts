import { Pool } from 'undici';
import type { NetworkKey } from '@meridian/networks';
import type { UpstreamSpec } from './upstream-config';
import { selectUpstream, type UpstreamStatus } from './upstream-selector';
import { classifyTransportError, type FailureKind } from './send-policy';

export class Upstream implements UpstreamStatus {
  healthy = true;
  height: number | undefined = undefined;
  inFlight = 0;
  lastError: string | undefined;
  readonly pool: Pool;
  /** Metrics label `<index>:<host>`. */
  readonly label: string;
  private readonly path: string;

  constructor(
    readonly index: number,
    readonly spec: UpstreamSpec,
    connections: number,
  ) {
    const url = new URL(spec.url);
    this.path = `${url.pathname}${url.search}`;
    this.label = `${index}:${url.host}`;
    this.pool = new Pool(url.origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connect: { timeout: 2_000 },
    });
  }

  /**
   * One HTTP exchange; resolves to the answer text or a classified failure. Never throws.
   * Uses undici's `dispatch` with a collecting handler rather than `request` (no body stream,
   * no extra promise chain): measured about a quarter less CPU per exchange.
   */
  post(
    body: string,
    timeoutMs: number,
  ): Promise<{ ok: true; text: string } | { ok: false; failure: FailureKind; reason: string }> {
    this.inFlight++;
    return new Promise((resolve) => {
      let status = 0;
      const chunks: Buffer[] = [];
      let done = false;
      const settle = (
        outcome: { ok: true; text: string } | { ok: false; failure: FailureKind; reason: string },
      ) => {
        if (done) return;
        done = true;
        this.inFlight--;
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
            onResponseData: (_controller, chunk) => {
              chunks.push(chunk);
            },
            onResponseEnd: () => {
              const text =
                chunks.length === 1
                  ? chunks[0]!.toString('utf8')
                  : Buffer.concat(chunks).toString('utf8');
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

function failureOf(error: unknown): { ok: false; failure: FailureKind; reason: string } {
  return {
    ok: false,
    failure: classifyTransportError(error),
    reason: (error as { code?: string }).code ?? (error as Error).message,
  };
}

/** The upstream nodes of one network in this region. */
export class UpstreamPool {
  readonly upstreams: Upstream[];
  private cursor = 0;

  constructor(
    readonly network: NetworkKey,
    specs: readonly UpstreamSpec[],
    private readonly options: { maxLagBlocks: number; connections: number },
  ) {
    this.upstreams = specs.map((spec, index) => new Upstream(index, spec, options.connections));
  }

  pick(exclude?: ReadonlySet<number>): Upstream | undefined {
    const index = selectUpstream(this.upstreams, {
      exclude,
      maxLagBlocks: this.options.maxLagBlocks,
      cursor: this.cursor++,
    });
    return index === undefined ? undefined : this.upstreams[index];
  }

  byTag(tag: string): Upstream | undefined {
    return this.upstreams.find((u) => u.spec.tag === tag);
  }

  byFloorTag(tag: string): Upstream | undefined {
    return this.upstreams.find((u) => u.spec.floorTag === tag);
  }

  /** Best height among healthy nodes. */
  get headHeight(): number | undefined {
    let best: number | undefined;
    for (const u of this.upstreams)
      if (u.healthy && u.height !== undefined && (best === undefined || u.height > best))
        best = u.height;
    return best;
  }

  async close(): Promise<void> {
    await Promise.all(this.upstreams.map((u) => u.close()));
  }
}
