/** The page's only way to the server: the dashboard's /api, with the session's CSRF token. */
import { fieldsOf } from './form-errors';
import { isOutcomeUnknown, MAY_STILL_BE_APPLIED } from './outcome-unknown';
import { isSessionGone } from './session-gone';
import { pageMessageOf } from './unavailable-words';
import { CLIENT_TIMEOUT_MS, RequestsInFlight, waitedFor } from './waits';

let csrfToken = '';

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** Called when the BFF says the session is gone (set by the session provider). */
let onSessionGone: () => void = () => undefined;

export function setSessionGoneHandler(handler: () => void): void {
  onSessionGone = handler;
}

/**
 * Called when a write may have been applied though it failed (outcome-unknown.ts; set by the
 * query client in main.tsx, which asks for what the page shows again until it sees it).
 */
let onOutcomeUnknown: () => void = () => undefined;

export function setOutcomeUnknownHandler(handler: () => void): void {
  onOutcomeUnknown = handler;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Field path as the form names it (`cu`, `accounts[1].plan`) → message (fieldsOf). */
    readonly fields: Record<string, string>,
    readonly body: Record<string, unknown>,
    /** How long the request took (the retry rule, waits.ts). */
    readonly elapsedMs = 0,
    /** The answer's Retry-After in seconds (a 429 of a limit, relayed by the BFF), if any. */
    readonly retryAfterSeconds?: number,
    /** A write that may have been applied all the same (outcome-unknown.ts). */
    readonly outcomeUnknown = false,
  ) {
    super(message);
  }
}

/** The requests waiting for an answer (a loading state says what it waits for: waits.ts). */
export const requestsInFlight = new RequestsInFlight();

export async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const started = Date.now();
  const done = requestsInFlight.begin(waitedFor(path), started);
  let response: Response;
  let text: string;
  try {
    // The BFF answers 503 after its UPSTREAM_TIMEOUT_MS; this bounds a BFF that does not answer.
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: {
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(method === 'GET' ? {} : { 'x-csrf-token': csrfToken }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    text = await response.text();
  } catch (error) {
    const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
    const code = timedOut ? 'timeout' : 'network_error';
    const unknown = isOutcomeUnknown(method, 0, code, {});
    if (unknown) onOutcomeUnknown();
    throw new ApiError(
      0,
      code,
      timedOut
        ? `no answer from the dashboard server within ${CLIENT_TIMEOUT_MS / 1000} s` +
            (unknown ? `; ${MAY_STILL_BE_APPLIED}` : '')
        : 'the dashboard server could not be reached',
      {},
      {},
      Date.now() - started,
      undefined,
      unknown,
    );
  } finally {
    done();
  }
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { error: 'bad_answer', message: `the server answered ${response.status}` };
  }
  if (response.ok) return parsed as T;
  const errorBody = (parsed ?? {}) as Record<string, unknown>;
  const code =
    typeof errorBody['error'] === 'string' ? errorBody['error'] : `http_${response.status}`;
  const message = pageMessageOf(
    response.status,
    code,
    typeof errorBody['message'] === 'string' && errorBody['message']
      ? errorBody['message']
      : `request failed (${response.status})`,
  );
  if (isSessionGone(response.status, code)) onSessionGone();
  const unknown = isOutcomeUnknown(method, response.status, code, errorBody);
  if (unknown) onOutcomeUnknown();
  const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
  throw new ApiError(
    response.status,
    code,
    message,
    fieldsOf(errorBody),
    errorBody,
    Date.now() - started,
    Number.isInteger(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
    unknown,
  );
}

/** Path of a REST API route through the BFF relay. */
export const relay = (upstream: 'billing' | 'webhooks' | 'audit', path: string) =>
  `/api/relay/${upstream}${path}`;
