import type { DeliveryErrorClass } from '@meridian/contracts';
import type { AddressPolicy } from '@meridian/webhooks';
import { Agent, request } from 'undici';
import { errorClassOf, isErrorLike } from './error-class';
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
  /** Keep-alive sockets per origin (the per-URL in-flight cap is 10). */
  connectionsPerOrigin?: number;
}

/**
 * One POST per attempt through one undici Agent whose connector resolves names itself and
 * refuses private or reserved addresses (guardedLookup). Success is a 2xx; a redirect is a
 * failure (undici's `request` never follows one); the answer is read up to 4 KiB, then the
 * connection is dropped rather than drained.
 */
export class HttpSender {
  private readonly agent: Agent;
  private readonly answerTimeoutMs: number;

  constructor(private readonly options: HttpSenderOptions) {
    this.answerTimeoutMs = options.answerTimeoutMs ?? ANSWER_TIMEOUT_MS;
    this.agent = new Agent({
      connections: options.connectionsPerOrigin ?? 10,
      connect: {
        timeout: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
        lookup: guardedLookup(options.policy, options.resolver ?? systemResolver),
      } as never,
      headersTimeout: this.answerTimeoutMs,
      bodyTimeout: this.answerTimeoutMs,
    });
  }

  async send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { ok: false, errorClass: 'connection', error: 'invalid target URL', durationMs: 0 };
    }
    const literal = refusedLiteral(target.hostname, this.options.policy);
    if (literal)
      return { ok: false, errorClass: 'refused_address', error: literal.message, durationMs: 0 };
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.answerTimeoutMs);
    try {
      const answer = await request(target, {
        method: 'POST',
        dispatcher: this.agent,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
        },
        body,
        signal: abort.signal,
      });
      const responseBody = await readAtMost(answer.body, ANSWER_READ_BYTES);
      const ok = answer.statusCode >= 200 && answer.statusCode < 300;
      return {
        ok,
        statusCode: answer.statusCode,
        ...(ok ? {} : { errorClass: 'http_status' as const, error: `HTTP ${answer.statusCode}` }),
        responseBody,
        durationMs: elapsed(),
      };
    } catch (error) {
      const errorClass = abort.signal.aborted ? 'timeout' : errorClassOf(error);
      return {
        ok: false,
        errorClass,
        error: describe(error).slice(0, 1024),
        durationMs: elapsed(),
      };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

async function readAtMost(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  limit: number,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
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
