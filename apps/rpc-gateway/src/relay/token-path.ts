/** `/<token>` or `/<token>/`, query string ignored: the JSON-RPC path and the WebSocket path. */
export const TOKEN_PATH = /^\/([^/?]+)\/?(?:\?.*)?$/;

/**
 * The access token of a path segment, percent-decoded. A segment that is not valid
 * percent-encoding (`/%zz`) is left as sent: it names no token, so it is answered 401 like any
 * unknown one. (The WebSocket upgrade decoded it unguarded, and the URIError of one
 * unauthenticated request took the whole process down.)
 */
export function tokenOf(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
