import { createHash } from 'node:crypto';
import { requestFingerprint } from './request-fingerprint';

describe('requestFingerprint', () => {
  it('is one value per operation and request, however the JSON was spelled', () => {
    const a = requestFingerprint('top-up:account', { cu: 5000, note: { b: 1, a: [1, 2] } });
    expect(requestFingerprint('top-up:account', { note: { a: [1, 2], b: 1 }, cu: 5000 })).toBe(a);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs for another amount, another operation, another order of an array', () => {
    const a = requestFingerprint('top-up:account', { cu: 5000 });
    expect(requestFingerprint('top-up:account', { cu: 5001 })).not.toBe(a);
    expect(requestFingerprint('top-up:operator', { cu: 5000 })).not.toBe(a);
    expect(requestFingerprint('x', { l: [1, 2] })).not.toBe(requestFingerprint('x', { l: [2, 1] }));
  });

  it('is sha256 of "<operation>\\n<canonical JSON>" (the migration backfills the same)', () => {
    // sha256('top-up:account\n{"cu":5000}'), computed apart from the code under test.
    expect(requestFingerprint('top-up:account', { cu: 5000 })).toBe(
      createHash('sha256').update('top-up:account\n{"cu":5000}').digest('hex'),
    );
  });

  describe('a webhook create body', () => {
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
});
