import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const VALID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Uses the caller's X-Request-Id when it is sane, otherwise makes one. Echoed on every answer. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  const value = Array.isArray(given) ? given[0] : given;
  return value && VALID.test(value) ? value : randomUUID();
}
