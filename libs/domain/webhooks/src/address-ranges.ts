import ipaddr from 'ipaddr.js';

/**
 * Which destination addresses a webhook may reach (COMPAT "Target URL rules"; issue 15's SSRF
 * rule): only globally routable unicast. Used at save time on literal IPs in the target URL
 * (webhook-matcher) and at send time on every address the name resolved to (delivery-worker),
 * so the two can never disagree.
 *
 * Forms that embed an IPv4 address at a known place (IPv4-mapped `::ffff:a.b.c.d`, the
 * well-known NAT64 prefix `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address they
 * carry: a private target must not slip through a translator. Refused outright: the local-use
 * NAT64 prefix `64:ff9b:1::/48` (RFC 8215: the operator picks the prefix length, so where the
 * IPv4 address sits, and whether the translator reaches private space, cannot be known), the
 * deprecated IPv4-compatible `::/96` (RFC 4291), Teredo, every other special range, and any IPv6
 * address outside global unicast `2000::/3` (the rest is reserved by the IETF).
 */
export interface AddressPolicy {
  /** Loopback is refused unless a deployment allow-lists it (local stack and tests only). */
  readonly allowLoopback?: boolean;
}

/** Why `ip` is refused (the range name, e.g. `private`, `loopback`), or null when allowed. */
export function refusedAddressReason(ip: string, policy: AddressPolicy = {}): string | null {
  if (!ipaddr.isValid(ip)) return 'invalid_address';
  const parsed = ipaddr.parse(ip);
  if (parsed.kind() === 'ipv4') return judgeIpv4(parsed as ipaddr.IPv4, policy);
  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'ipv4Mapped') return judgeIpv4(v6.toIPv4Address(), policy);
  if (range === 'rfc6052' && !v6.match(NAT64_WELL_KNOWN, 96)) return 'nat64LocalUse';
  if (range === 'rfc6052' || range === '6to4') {
    const embedded = range === '6to4' ? sixToFourIpv4(v6) : lastIpv4(v6);
    const inner = judgeIpv4(embedded, policy);
    return inner === null ? null : `${range}:${inner}`;
  }
  if (range === 'loopback') return policy.allowLoopback ? null : 'loopback';
  if (range !== 'unicast') return range;
  if (v6.match(UNSPECIFIED_V6, 96)) return 'ipv4Compatible';
  return v6.match(GLOBAL_UNICAST, 3) ? null : 'reserved';
}

const NAT64_WELL_KNOWN = ipaddr.IPv6.parse('64:ff9b::');
const UNSPECIFIED_V6 = ipaddr.IPv6.parse('::');
const GLOBAL_UNICAST = ipaddr.IPv6.parse('2000::');

function judgeIpv4(ip: ipaddr.IPv4, policy: AddressPolicy): string | null {
  const range = ip.range();
  if (range === 'loopback') return policy.allowLoopback ? null : 'loopback';
  return range === 'unicast' ? null : range;
}

function lastIpv4(ip: ipaddr.IPv6): ipaddr.IPv4 {
  const b = ip.toByteArray();
  return new ipaddr.IPv4(b.slice(12, 16));
}

function sixToFourIpv4(ip: ipaddr.IPv6): ipaddr.IPv4 {
  const b = ip.toByteArray();
  return new ipaddr.IPv4(b.slice(2, 6));
}
