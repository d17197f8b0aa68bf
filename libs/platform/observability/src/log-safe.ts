/**
 * How a configured URL (a node, NATS) appears in logs: its origin (scheme, host, port) and
 * nothing else. A node provider's access token often sits in the path (`/v2/<key>`), the query
 * (`?apikey=`) or the userinfo, NATS credentials in the userinfo, so none of them is ever logged
 * (QA E D1/D2; the gateway's `<index>:<host>` labels follow the same rule).
 */
export function urlOrigin(url: string): string {
  try {
    const parsed = new URL(url);
    // Non-special schemes (nats:, grpc:) have an opaque origin ("null"); host drops userinfo.
    return parsed.origin !== 'null' ? parsed.origin : `${parsed.protocol}//${parsed.host}`;
  } catch {
    return '(unparseable URL)';
  }
}

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'`<>()[\]{},]+/gi;

/** The text with every URL in it reduced to its origin (error messages that quote a URL). */
export function redactUrls(text: string): string {
  return text.replace(URL_IN_TEXT, (url) => urlOrigin(url));
}

/** An error as it may be logged: no stack (it repeats the message), URLs as origins only. */
export interface LoggableError {
  type: string;
  message: string;
  status?: number;
  code?: string | number;
  details?: string;
  cause?: LoggableError;
}

const MAX_CAUSES = 5;

/**
 * A cleaned copy of an error for a log line: name, status/code, message and `details` with every
 * URL reduced to its origin, the `cause` chain cleaned the same way; no stack, no other fields
 * (viem's HttpRequestError carries `url`, `body` and a message and stack quoting the full URL).
 * Log it under a key other than `err`: pino's `err` serializer would rebuild type and stack.
 */
export function loggableError(error: unknown, depth = 0): LoggableError {
  if (typeof error !== 'object' || error === null) {
    return { type: typeof error, message: redactUrls(String(error)) };
  }
  const fields = error as Record<string, unknown>;
  const ctorName = (error as { constructor?: { name?: unknown } }).constructor?.name;
  const type =
    typeof fields['name'] === 'string' && fields['name'] !== 'Error'
      ? fields['name']
      : typeof ctorName === 'string'
        ? ctorName
        : 'Error';
  const result: LoggableError = {
    type,
    message: redactUrls(typeof fields['message'] === 'string' ? fields['message'] : String(error)),
  };
  if (typeof fields['status'] === 'number') result.status = fields['status'];
  const code = fields['code'];
  if (typeof code === 'string' || typeof code === 'number') result.code = code;
  if (typeof fields['details'] === 'string' && fields['details'] !== '') {
    result.details = redactUrls(fields['details']);
  }
  const cause = fields['cause'];
  if (cause !== undefined && cause !== null && cause !== error && depth < MAX_CAUSES) {
    result.cause = loggableError(cause, depth + 1);
  }
  return result;
}
