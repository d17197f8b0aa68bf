/**
 * Strict bodies (400 `malformed_body`) and query strings (400 `invalid_query`), each message
 * naming where the problem is (`query: unknown parameter "sort"`, `body.accounts[1].plan: …`):
 * the platform's one implementation, shared by the REST apps.
 */
export { parseBody, parseQuery } from '@meridian/platform-http';
