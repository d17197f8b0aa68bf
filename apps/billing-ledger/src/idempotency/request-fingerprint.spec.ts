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
});
