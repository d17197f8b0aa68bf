import { refusedAddressReason } from './address-ranges';

describe('refusedAddressReason', () => {
  it.each([
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'teredo'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['64:ff9b::a00:1', 'rfc6052:private'],
    ['64:ff9b::7f00:1', 'rfc6052:loopback'],
    ['2002:a00:1::', '6to4:private'],
    // Local-use NAT64 (RFC 8215): a /48 layout puts the IPv4 address elsewhere than the last
    // 4 bytes, so the tail 8.8.8.8 says nothing; the whole prefix is refused.
    ['64:ff9b:1:a00:0:7:808:808', 'nat64LocalUse'],
    ['64:ff9b:1::808:808', 'nat64LocalUse'],
    ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'nat64LocalUse'],
    // Deprecated IPv4-compatible ::/96 (RFC 4291), whatever IPv4 address it carries.
    ['::a00:1', 'ipv4Compatible'],
    ['::7f00:1', 'ipv4Compatible'],
    ['::808:808', 'ipv4Compatible'],
    ['::c0a8:101', 'ipv4Compatible'],
    // Outside global unicast 2000::/3: reserved by the IETF.
    ['4000::1', 'reserved'],
    ['1::1', 'reserved'],
    ['::1:0:0:1', 'reserved'],
    ['not-an-ip', 'invalid_address'],
  ])('%s is refused as %s', (ip, reason) => {
    expect(refusedAddressReason(ip)).toBe(reason);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2a00:1450::1',
    '3ffe::1',
  ])('%s (globally routable) is allowed', (ip) => {
    expect(refusedAddressReason(ip)).toBeNull();
  });

  it('allows loopback only when the policy allow-lists it, never private ranges', () => {
    expect(refusedAddressReason('127.0.0.1', { allowLoopback: true })).toBeNull();
    expect(refusedAddressReason('::1', { allowLoopback: true })).toBeNull();
    expect(refusedAddressReason('::ffff:127.0.0.1', { allowLoopback: true })).toBeNull();
    expect(refusedAddressReason('10.0.0.1', { allowLoopback: true })).toBe('private');
  });
});
