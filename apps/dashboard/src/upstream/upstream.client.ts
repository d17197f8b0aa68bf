import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';

export type Upstream = 'billing' | 'webhooks' | 'audit';

export interface UpstreamAnswer {
  status: number;
  body: unknown;
  /** The answer's headers the BFF passes on (`RELAYED_HEADERS`, lower case), when present. */
  headers?: Record<string, string>;
}

/**
 * The upstream headers a relayed answer keeps: `Retry-After` (a 429 of the matcher's
 * test-delivery limits, for one) tells the caller when to ask again; `ETag` (the matcher's
 * `"<version>"` of one webhook) is what the caller's next `If-Match` names. Nothing else is the
 * caller's: the APIs' `X-Request-Id` names their request, not the dashboard's, and framing
 * (length, encoding, connection) is the BFF's own.
 */
export const RELAYED_HEADERS: readonly string[] = ['retry-after', 'etag'];

/**
 * The request headers the relay passes on from the page: an `Idempotency-Key` (a create or a
 * top-up sent once) and an `If-Match` (a change made only to the version the page read; the
 * matcher answers 412 `version_mismatch` otherwise). Cookies, the CSRF token and the rest stay
 * with the BFF.
 */
export const PASSED_REQUEST_HEADERS: readonly string[] = ['idempotency-key', 'if-match'];

/** The page's headers an API reads (`PASSED_REQUEST_HEADERS`), as sent. */
export function passedHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const name of PASSED_REQUEST_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string') passed[name] = value;
  }
  return passed;
}

export interface UpstreamCall {
  bearer: string;
  body?: unknown;
  query?: string;
  headers?: Record<string, string>;
}

/**
 * The dashboard's only way to the REST APIs: server-side, with the account's API key (or the
 * operator token), so the APIs keep their one auth scheme. Answers come back as they are (status
 * and JSON body, with the headers of `RELAYED_HEADERS`) and the BFF relays them; only "could not
 * reach it" becomes our own error.
 */
@Injectable()
export class UpstreamClient {
  private readonly bases: Record<Upstream, string>;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const trim = (url: string) => url.replace(/\/+$/, '');
    this.bases = {
      billing: trim(config.BILLING_API_URL),
      webhooks: trim(config.WEBHOOKS_API_URL),
      audit: trim(config.AUDIT_API_URL),
    };
  }

  async call(
    upstream: Upstream,
    method: string,
    path: string,
    call: UpstreamCall,
  ): Promise<UpstreamAnswer> {
    const url = `${this.bases[upstream]}${path}${call.query ? `?${call.query}` : ''}`;
    const headers: Record<string, string> = {
      authorization: `Bearer ${call.bearer}`,
      accept: 'application/json',
      ...call.headers,
    };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      // The whole answer within UPSTREAM_TIMEOUT_MS (the body too): the page reports a hung
      // API after this one wait and does not ask again (web/src/waits.ts).
      response = await fetch(url, {
        method,
        headers,
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal: AbortSignal.timeout(this.config.UPSTREAM_TIMEOUT_MS),
      });
      text = await response.text();
    } catch (error) {
      const timedOut = error instanceof Error && error.name === 'TimeoutError';
      throw upstreamUnavailable(upstream, method, timedOut, this.config.UPSTREAM_TIMEOUT_MS, error);
    }
    let body: unknown = null;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = { error: 'upstream_error', message: `${upstream} answered ${response.status}` };
      }
    }
    const relayed: Record<string, string> = {};
    for (const name of RELAYED_HEADERS) {
      const value = response.headers.get(name);
      if (value !== null) relayed[name] = value;
    }
    return { status: response.status, body, headers: relayed };
  }

  /** For the BFF's own use of an answer: a non-2xx becomes a DomainError carrying its code. */
  async json<T>(upstream: Upstream, method: string, path: string, call: UpstreamCall): Promise<T> {
    const answer = await this.call(upstream, method, path, call);
    if (answer.status >= 200 && answer.status < 300) return answer.body as T;
    throw upstreamError(upstream, answer);
  }
}

/**
 * The one wording of "no answer from an API" for every call the BFF makes (QA M5). A read that
 * timed out names the wait; a write that timed out may have been applied all the same (the API
 * was slow, not necessarily down: an operator's plan change said "did not answer" and was
 * made), so it says so, with `outcome: "unknown"` for the page, which then asks again until it
 * sees the outcome (web/src/outcome-unknown.ts). Never retryable as is: sending a write again
 * could apply it twice. An API not reachable at all saw nothing.
 */
export function upstreamUnavailable(
  upstream: Upstream,
  method: string,
  timedOut: boolean,
  timeoutMs: number,
  cause?: unknown,
): DomainError {
  const read = method === 'GET' || method === 'HEAD';
  if (!timedOut)
    return new DomainError('upstream_unavailable', 'unavailable', `${upstream} is not reachable`, {
      cause,
    });
  if (read)
    return new DomainError(
      'upstream_unavailable',
      'unavailable',
      `${upstream} did not answer within ${timeoutMs / 1000} s`,
      { cause },
    );
  return new DomainError(
    'upstream_unavailable',
    'unavailable',
    `${upstream} did not answer in time; the change may still be applied — this page will show ` +
      'the outcome',
    { cause, retryable: false, details: { outcome: 'unknown' } },
  );
}

const kindOfStatus: Record<number, ConstructorParameters<typeof DomainError>[1]> = {
  400: 'invalid',
  401: 'unauthenticated',
  402: 'payment_required',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'too_large',
  429: 'rate_limited',
};

export function upstreamError(upstream: Upstream, answer: UpstreamAnswer): DomainError {
  const body = (answer.body ?? {}) as { error?: unknown; message?: unknown };
  const code = typeof body.error === 'string' ? body.error : 'upstream_error';
  const message = typeof body.message === 'string' ? body.message : `${upstream} refused: ${code}`;
  return new DomainError(code, kindOfStatus[answer.status] ?? 'unavailable', message);
}
