import { DomainError, quoteInput } from '@meridian/errors';
import { refusedAddressReason } from './address-ranges';
import { refusedAt } from './filter-model';

/** Longest target URL we store (a real endpoint is far shorter; the KV entry has a size cap). */
export const MAX_TARGET_URL_LENGTH = 2048;

export interface TargetUrlPolicy {
  /**
   * Loopback targets (127.0.0.0/8, ::1, `localhost`) over http or https. Only the local stack
   * and tests set it (WEBHOOK_ALLOW_LOOPBACK_TARGETS); production refuses loopback like any
   * other reserved address.
   */
  readonly allowLoopback?: boolean;
}

// COMPAT: localhost, .local, .internal, .test, .invalid, .example; plus their RFC 6761 / 8375
// siblings that can never name a public endpoint.
const RESERVED_SUFFIXES = [
  'localhost',
  'local',
  'internal',
  'test',
  'invalid',
  'example',
  'home.arpa',
  'onion',
];

const refuse = (code: string, message: string) =>
  new DomainError(code, 'invalid', message, { details: refusedAt('body.target_url') });

function isReservedName(host: string): boolean {
  if (!host.includes('.')) return true; // single-label names resolve through search domains
  return RESERVED_SUFFIXES.some((suffix) => host === suffix || host.endsWith(`.${suffix}`));
}

/**
 * The save-time rule for a webhook's target (COMPAT "Target URL rules"). The WHATWG parser
 * normalises every IPv4 notation (decimal `2130706433`, octal `0177.0.0.1`, hex `0x7f.1`) to
 * dotted form and IPv6 to its compressed form, so the one address rule (refusedAddressReason)
 * judges what a client would actually connect to. Returns the normalised URL.
 */
export function checkTargetUrl(input: string, policy: TargetUrlPolicy = {}): string {
  if (input.length > MAX_TARGET_URL_LENGTH)
    throw refuse(
      'target_url_too_long',
      `target_url is longer than ${MAX_TARGET_URL_LENGTH} characters`,
    );
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw refuse('target_url_invalid', `target_url ${quoteInput(input)} is not an absolute URL`);
  }
  // Port 0 parses (the parser refuses only > 65535) but no connection can be made to it: every
  // delivery would fail and be billed, so it is refused like a port out of range.
  if (url.port === '0')
    throw refuse('target_url_invalid', 'target_url port must be between 1 and 65535');
  if (url.username !== '' || url.password !== '')
    throw refuse('target_url_userinfo', 'target_url must not carry a user name or password');
  if (url.hash !== '' || input.includes('#'))
    throw refuse('target_url_fragment', 'target_url must not have a fragment (#…)');
  const host = url.hostname.replace(/\.$/, '').toLowerCase();
  if (host === '') throw refuse('target_url_invalid', 'target_url has no host');
  const literal = ipLiteralOf(host);
  const loopbackAllowed =
    policy.allowLoopback === true &&
    (host === 'localhost' || (literal !== null && refusedAddressReason(literal) === 'loopback'));
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopbackAllowed))
    throw refuse('target_url_not_https', 'target_url must use https');
  if (loopbackAllowed) return url.toString();
  if (literal !== null) {
    const reason = refusedAddressReason(literal, { allowLoopback: false });
    if (reason !== null)
      throw refuse(
        'target_url_private_address',
        `target_url points at a ${reason} address (${literal}); use a public endpoint`,
      );
    return url.toString();
  }
  if (isReservedName(host))
    throw refuse(
      'target_url_reserved_name',
      `target_url host ${quoteInput(host)} is a reserved or local name`,
    );
  return url.toString();
}

/** The IP address a normalised hostname spells, or null for a DNS name. */
function ipLiteralOf(host: string): string | null {
  if (host.startsWith('[') && host.endsWith(']')) return host.slice(1, -1);
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) ? host : null;
}
