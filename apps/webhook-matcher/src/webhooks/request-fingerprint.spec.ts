import { requestFingerprint } from './request-fingerprint';

describe('requestFingerprint', () => {
  const body = {
    network: 'eth-mainnet',
    trigger_type: 'address_activity',
    target_url: 'https://a.com/',
    filters: { any: [{ address: { in: ['0x01'] } }, { not: { contract: { in: ['0x02'] } } }] },
  };

  it('ignores key order, spacing and absent fields', () => {
    const reordered = JSON.parse(
      `{ "filters": {"any":[{"address":{"in":["0x01"]}},{"not":{"contract":{"in":["0x02"]}}}]},
         "target_url": "https://a.com/", "trigger_type": "address_activity", "network": "eth-mainnet" }`,
    );
    expect(requestFingerprint('create', reordered)).toBe(requestFingerprint('create', body));
    expect(requestFingerprint('create', { ...body, name: undefined })).toBe(
      requestFingerprint('create', body),
    );
  });

  it.each([
    ['another target', { ...body, target_url: 'https://b.com/' }],
    ['a name', { ...body, name: 'x' }],
    [
      'another order of filter children',
      { ...body, filters: { any: [...body.filters.any].reverse() } },
    ],
    ['null for a field', { ...body, name: null }],
  ])('changes with %s', (_name, other) => {
    expect(requestFingerprint('create', other)).not.toBe(requestFingerprint('create', body));
  });

  it('changes with the operation', () => {
    expect(requestFingerprint('a', body)).not.toBe(requestFingerprint('b', body));
  });
});
