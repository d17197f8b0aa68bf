/**
 * The session cookie, read and written here rather than through @fastify/cookie: its v11 loads
 * the `cookie` package by a dynamic import that jest's VM cannot run, and the dashboard needs
 * exactly one cookie with fixed attributes.
 */
export const SESSION_COOKIE = 'mrd_session';

/** The value of `name` in a Cookie header (first occurrence), or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    if (part.slice(0, at).trim() !== name) continue;
    const raw = part
      .slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    try {
      return decodeURIComponent(raw);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export function sessionCookie(value: string, expires: Date, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${encodeURIComponent(value)}`,
    'Path=/',
    `Expires=${expires.toUTCString()}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie('', new Date(0), secure);
}
