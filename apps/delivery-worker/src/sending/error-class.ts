import type { DeliveryErrorClass } from '@meridian/contracts';

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ENODATA']);
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
  'ABORT_ERR',
]);
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'EPROTO',
]);

/** Errors from node's core may come from another realm (vm, test runners): no instanceof. */
export function isErrorLike(value: unknown): value is Error {
  return (
    typeof value === 'object' && value !== null && typeof (value as Error).message === 'string'
  );
}

function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && isErrorLike(current); depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string') codes.push(code);
    if (current.name === 'AbortError' || current.name === 'TimeoutError') codes.push('ABORT_ERR');
    // OpenSSL errors carry `library` / `reason` and not always a code.
    if ('library' in current || /SSL routines|ssl3_|tls_/i.test(current.message))
      codes.push('ERR_TLS');
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}

/**
 * The class of an attempt that got no HTTP answer (spec rule 3 of deliveries: each is a
 * failed attempt). undici wraps socket errors in `cause`, so the whole chain is read.
 */
export function errorClassOf(error: unknown): DeliveryErrorClass {
  const codes = codesOf(error);
  if (codes.includes('EREFUSED_ADDRESS')) return 'refused_address';
  if (codes.some((c) => DNS_CODES.has(c))) return 'dns';
  if (codes.some((c) => TIMEOUT_CODES.has(c))) return 'timeout';
  if (codes.some((c) => TLS_CODES.has(c) || c.startsWith('ERR_TLS') || c.startsWith('ERR_SSL')))
    return 'tls';
  return 'connection';
}
