/** The page's only way to the server: the dashboard's /api, with the session's CSRF token. */
import { fieldsOf } from './form-errors';
import { isSessionGone } from './session-gone';

let csrfToken = '';

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** Called when the BFF says the session is gone (set by the session provider). */
let onSessionGone: () => void = () => undefined;

export function setSessionGoneHandler(handler: () => void): void {
  onSessionGone = handler;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Field path as the form names it (`cu`, `accounts[1].plan`) → message (fieldsOf). */
    readonly fields: Record<string, string>,
    readonly body: Record<string, unknown>,
  ) {
    super(message);
  }
}

export async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(method === 'GET' ? {} : { 'x-csrf-token': csrfToken }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
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
  const message =
    typeof errorBody['message'] === 'string' && errorBody['message']
      ? errorBody['message']
      : `request failed (${response.status})`;
  if (isSessionGone(response.status, code)) onSessionGone();
  throw new ApiError(response.status, code, message, fieldsOf(errorBody), errorBody);
}

/** Path of a REST API route through the BFF relay. */
export const relay = (upstream: 'billing' | 'webhooks' | 'audit', path: string) =>
  `/api/relay/${upstream}${path}`;
