import ipaddr from 'ipaddr.js';

/**
 * Which destination addresses a webhook may reach (COMPAT "Target URL rules"; issue 15's SSRF
 * rule): only globally routable unicast. Used at save time on literal IPs in the target URL
 * (webhook-matcher) and at send time on every address the name resolved to (delivery-worker),
 * so the two can never disagree.
 *
 * Forms that embed an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96` and
 * `64:ff9b:1::/48`, 6to4 `2002::/16`) are judged by the IPv4 address they carry: a private
 * target must not slip through a translator. Teredo and every other special range are refused.
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
  if (range === 'rfc6052' || range === '6to4') {
    const embedded = range === '6to4' ? sixToFourIpv4(v6) : lastIpv4(v6);
    const inner = judgeIpv4(embedded, policy);
    return inner === null ? null : `${range}:${inner}`;
  }
  if (range === 'loopback') return policy.allowLoopback ? null : 'loopback';
  return range === 'unicast' ? null : range;
}

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
