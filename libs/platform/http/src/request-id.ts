import type { IncomingMessage } from 'node:http';
import { requestIdFrom } from '@meridian/platform-observability';

/** Uses the caller's X-Request-Id when it is sane, otherwise makes one. Echoed on every answer. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return requestIdFrom(Array.isArray(given) ? given[0] : given);
}
