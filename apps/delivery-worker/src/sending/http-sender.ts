import type { DeliveryErrorClass } from '@meridian/contracts';
import type { AddressPolicy } from '@meridian/webhooks';
import { Agent } from 'undici';
import { errorClassOf, isErrorLike } from './error-class';
import { BoundedMemo } from '../common/bounded-memo';
import { guardedLookup, refusedLiteral, systemResolver, type Resolver } from './guarded-lookup';

/** COMPAT "Webhook delivery": 5 s to connect, 15 s for the answer, at most 4 KiB read. */
export const CONNECT_TIMEOUT_MS = 5_000;
export const ANSWER_TIMEOUT_MS = 15_000;
export const ANSWER_READ_BYTES = 4 * 1024;
export const USER_AGENT = 'Meridian-Webhooks/1.0 (+https://meridian.example/docs/webhooks)';

export interface SendResult {
  ok: boolean;
  statusCode?: number;
  errorClass?: DeliveryErrorClass;
  error?: string;
  /** First 4 KiB of the answer, decoded as UTF-8. */
  responseBody?: string;
  durationMs: number;
}

export interface HttpSenderOptions {
  policy: AddressPolicy;
  resolver?: Resolver;
  connectTimeoutMs?: number;
  answerTimeoutMs?: number;
}

/** A target URL as the sender needs it, parsed once per URL. */
interface Target {
  origin: string;
  path: string;
  refused: string | undefined;
}

/** undici's headers and body timeouts lie this far past the attempt's deadline (twice a tick). */
const UNDICI_TIMEOUT_MARGIN_MS = 1_000;
/** undici's own answer timeouts: the attempt's timeout, however it surfaces. */
const ANSWER_TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Parsed targets kept (one per endpoint URL; cleared when full). */
const TARGET_MEMORY = 10_000;

/**
 * One POST per attempt through one undici Agent whose connector resolves names itself and
 * refuses private or reserved addresses (guardedLookup). Success is a 2xx; a redirect is a
 * failure (nothing here follows one); the answer is read up to 4 KiB, then the connection is
 * dropped rather than drained.
 *
 * The request goes through the Agent's `dispatch` with a handler of our own (AttemptHandler),
 * not `request()`: no body stream, AbortController or async resource per attempt, which were a
 * third of the sender's CPU (bench/README, "## delivery").
 */
export class HttpSender {
  private readonly agent: Agent;
  private readonly answerTimeoutMs: number;
  private readonly targets = new BoundedMemo<Target | null>(TARGET_MEMORY);

  constructor(private readonly options: HttpSenderOptions) {
    this.answerTimeoutMs = options.answerTimeoutMs ?? ANSWER_TIMEOUT_MS;
    this.agent = new Agent({
      // No cap of sockets per origin: the protection's limits (10 in flight per endpoint URL,
      // 200 req/s per host) are the ones an attempt waits for, unbilled, before it is sent. A cap
      // here queued attempts inside undici after their 15 s had started (QA: three URLs of one
      // host at 10 in flight each shared 10 sockets; attempts timed out before they were sent,
      // were billed, and their events were sent again).
      connections: null,
      connect: {
        timeout: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
        lookup: guardedLookup(options.policy, options.resolver ?? systemResolver),
      } as never,
      // The attempt's own timer (AttemptHandler) ends an attempt at its deadline; undici's
      // timeouts are only a backstop behind it. They run on coarse timers (ticks of 499 ms that
      // count a timer from the tick before it was set) and fired up to half a second early when
      // equal to the deadline (QA: "Headers Timeout Error" at 14,985 ms). Should one still fire
      // first (a stalled event loop), the handler reads it as the attempt's timeout.
      headersTimeout: this.answerTimeoutMs + UNDICI_TIMEOUT_MARGIN_MS,
      bodyTimeout: this.answerTimeoutMs + UNDICI_TIMEOUT_MARGIN_MS,
    });
  }

  /** `body`: bytes (as signed) or text, sent as they are. */
  send(
    url: string,
    headers: Record<string, string>,
    body: Uint8Array | string,
  ): Promise<SendResult> {
    const target = this.targetOf(url);
    if (target === undefined)
      return Promise.resolve({
        ok: false,
        errorClass: 'connection',
        error: 'invalid target URL',
        durationMs: 0,
      });
    if (target.refused !== undefined)
      return Promise.resolve({
        ok: false,
        errorClass: 'refused_address',
        error: target.refused,
        durationMs: 0,
      });
    return new Promise<SendResult>((resolve) => {
      const handler = new AttemptHandler(resolve, this.answerTimeoutMs);
      this.agent.dispatch(
        {
          origin: target.origin,
          path: target.path,
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
          body,
        },
        handler,
      );
    });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** The parsed target of an endpoint URL; undefined for one that does not parse. */
  private targetOf(url: string): Target | undefined {
    return (
      this.targets.get(url, (key) => {
        let parsed: URL;
        try {
          parsed = new URL(key);
        } catch {
          return null;
        }
        return {
          origin: parsed.origin,
          path: `${parsed.pathname}${parsed.search}`,
          refused: refusedLiteral(parsed.hostname, this.options.policy)?.message,
        };
      }) ?? undefined
    );
  }
}

/**
 * One attempt's side of undici's dispatch (the handler interface undici runs internally):
 * keeps the status, the first 4 KiB of the answer, and settles the attempt exactly once, on the
 * answer's end, on an error, on 4 KiB read (the connection is then dropped), or when the 15 s
 * for the whole answer are up (the request is aborted). An answer whose status arrived is judged
 * by it, whatever became of its body; without one, the attempt is class `timeout` or the error's.
 */
class AttemptHandler {
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;
  private abort: ((reason?: Error) => void) | undefined;
  private statusCode = 0;
  private chunks: Buffer[] | undefined;
  private size = 0;
  private settled = false;
  private timedOut = false;

  constructor(
    private readonly resolve: (result: SendResult) => void,
    private readonly timeoutMs: number,
  ) {
    this.timer = setTimeout(this.onTimeout, timeoutMs);
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.abort = abort;
    if (this.settled) abort();
  }

  onHeaders(statusCode: number): boolean {
    // 1xx (100 Continue, 103 Early Hints) come before the answer; the answer's status counts.
    if (statusCode >= 200) this.statusCode = statusCode;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.settled) return false;
    (this.chunks ??= []).push(chunk);
    this.size += chunk.length;
    if (this.size >= ANSWER_READ_BYTES) {
      this.answered();
      this.abort?.(new Error('answer read up to 4 KiB; connection dropped'));
      return false;
    }
    return true;
  }

  onComplete(): void {
    this.answered();
  }

  onError(error: Error): void {
    if (this.settled) return;
    // The answer's status came in time: it decides the attempt (COMPAT: success is a 2xx within
    // 15 s; the body is read only to keep 4 KiB of it), though the body never ended or broke
    // (QA: a 200 whose body dribbled was a `timeout` with no status, and the event sent again).
    if (this.statusCode !== 0) {
      this.answered();
      return;
    }
    const timedOut =
      this.timedOut || ANSWER_TIMEOUT_CODES.has((error as NodeJS.ErrnoException).code ?? '');
    const errorClass = timedOut ? 'timeout' : errorClassOf(error);
    this.finish({
      ok: false,
      errorClass,
      // Timed out: whatever the abort surfaced as (our reason, or undici's wrapping of it), and
      // undici's own headers or body timeout too, the text is said once, here.
      error: (timedOut ? timeoutText(this.timeoutMs) : describe(error)).slice(0, 1024),
      durationMs: this.elapsed(),
    });
  }

  onUpgrade(): void {
    this.onError(new Error('unexpected protocol upgrade'));
  }

  private readonly onTimeout = (): void => {
    this.timedOut = true;
    const error = Object.assign(new Error(timeoutText(this.timeoutMs)), { name: 'TimeoutError' });
    if (this.abort) this.abort(error);
    else this.onError(error);
  };

  private answered(): void {
    if (this.settled) return;
    const statusCode = this.statusCode;
    const ok = statusCode >= 200 && statusCode < 300;
    const chunks = this.chunks;
    const responseBody =
      chunks === undefined
        ? ''
        : (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))
            .subarray(0, ANSWER_READ_BYTES)
            .toString('utf8');
    const result: SendResult = { ok, statusCode, responseBody, durationMs: this.elapsed() };
    if (!ok) {
      result.errorClass = 'http_status';
      result.error = `HTTP ${statusCode}`;
    }
    this.finish(result);
  }

  private finish(result: SendResult): void {
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(result);
  }

  private elapsed(): number {
    return Math.round(performance.now() - this.started);
  }
}

/** The one wording of a timed-out attempt (QA: it read "… time limit: no answer in time"). */
export function timeoutText(timeoutMs: number): string {
  return `no answer within ${timeoutMs / 1_000} s`;
}

function describe(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 3 && isErrorLike(current); depth += 1) {
    parts.push(current.message);
    current = (current as { cause?: unknown }).cause;
  }
  return parts.join(': ') || String(error);
}
