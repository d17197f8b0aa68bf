import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { sealSecret } from './secret-box';
import {
  isSealedSecretError,
  parseSecretsKeyList,
  sealedKeyId,
  SealedSecretError,
  SecretKeyRing,
  secretsKeyId,
} from './secret-box-ring';

const keyA = randomBytes(32);
const keyB = randomBytes(32);
const keyC = randomBytes(32);

function failureOf(fn: () => unknown): SealedSecretError {
  try {
    fn();
  } catch (error) {
    if (isSealedSecretError(error)) return error;
    throw error;
  }
  throw new Error('did not throw');
}

describe('secret key ring', () => {
  it('round-trips any text under the current key, and an older ring member opens it too', () => {
    const ring = new SecretKeyRing(keyA);
    const rotated = new SecretKeyRing(keyB, [keyA]);
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), (text) => {
        const sealed = ring.seal(text);
        expect(ring.open(sealed)).toBe(text);
        expect(rotated.open(sealed)).toBe(text);
        const resealed = rotated.reseal(sealed);
        expect(resealed.startsWith(rotated.currentPrefix)).toBe(true);
        expect(new SecretKeyRing(keyB).open(resealed)).toBe(text);
      }),
    );
  });

  it('names the key in the value: v2.<key id>, the key id a short hash of the key', () => {
    const ring = new SecretKeyRing(keyA, [keyB]);
    const sealed = ring.seal('whsec_abc123');
    expect(sealed).not.toContain('whsec_abc123');
    expect(sealed.split('.')).toHaveLength(5);
    expect(sealed.startsWith(`v2.${secretsKeyId(keyA)}.`)).toBe(true);
    expect(sealedKeyId(sealed)).toBe(secretsKeyId(keyA));
    expect(secretsKeyId(keyA)).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(secretsKeyId(keyA)).not.toBe(secretsKeyId(keyB));
    expect(ring.seal('whsec_abc123')).not.toBe(sealed);
  });

  it('keeps v1 values readable under any key of the ring, and reseals them as v2', () => {
    const v1 = sealSecret(keyA, 'whsec_old');
    expect(sealedKeyId(v1)).toBeNull();
    const rotated = new SecretKeyRing(keyB, [keyC, keyA]);
    expect(rotated.open(v1)).toBe('whsec_old');
    expect(rotated.needsReseal(v1)).toBe(true);
    const resealed = rotated.reseal(v1);
    expect(sealedKeyId(resealed)).toBe(rotated.currentKeyId);
    expect(new SecretKeyRing(keyB).open(resealed)).toBe('whsec_old');
  });

  it('leaves a value sealed under the current key as it is (reseal is idempotent)', () => {
    const ring = new SecretKeyRing(keyB, [keyA]);
    const sealed = ring.seal('whsec_x');
    expect(ring.needsReseal(sealed)).toBe(false);
    expect(ring.reseal(sealed)).toBe(sealed);
    expect(ring.needsReseal(new SecretKeyRing(keyA).seal('whsec_x'))).toBe(true);
  });

  it('refuses a value under a key it does not hold, naming that key id', () => {
    const sealed = new SecretKeyRing(keyC).seal('whsec_x');
    const error = failureOf(() => new SecretKeyRing(keyB, [keyA]).open(sealed));
    expect(error.reason).toBe('unknown_key');
    expect(error.keyId).toBe(secretsKeyId(keyC));
    expect(error.message).toContain(secretsKeyId(keyC));
    expect(error.message).toContain('WEBHOOK_SECRETS_PREVIOUS_KEYS');
    expect(error.message).not.toContain(keyC.toString('base64'));
    // Another ring's setting (the dashboard's) is the one named there.
    const named = failureOf(() =>
      new SecretKeyRing(keyB, [], { previousKeysSetting: 'DASHBOARD_SECRETS_PREVIOUS_KEYS' }).open(
        sealed,
      ),
    );
    expect(named.message).toContain('add that key to DASHBOARD_SECRETS_PREVIOUS_KEYS');
    const v1 = failureOf(() => new SecretKeyRing(keyB).open(sealSecret(keyA, 'whsec_x')));
    expect(v1.reason).toBe('not_opened');
    expect(v1.keyId).toBeNull();
  });

  it('refuses tampered values and garbage', () => {
    const ring = new SecretKeyRing(keyA);
    const sealed = ring.seal('whsec_abc123');
    const parts = sealed.split('.');
    const body = [...parts];
    body[4] = Buffer.from('whsec_evil!!').toString('base64url');
    expect(failureOf(() => ring.open(body.join('.'))).reason).toBe('not_opened');
    // The key id is bound into the tag: relabelling a value to another key id of the ring fails.
    const both = new SecretKeyRing(keyA, [keyB]);
    const relabelled = [...parts];
    relabelled[1] = secretsKeyId(keyB);
    expect(failureOf(() => both.open(relabelled.join('.'))).reason).toBe('not_opened');
    for (const garbage of ['garbage', '', 'v2..a.b.c', 'v3.x.a.b.c', 'v1.a.b', `${sealed}.x`])
      expect(failureOf(() => ring.open(garbage)).reason).toBe('malformed');
    fc.assert(
      fc.property(fc.string(), (text) => {
        try {
          ring.open(text);
        } catch (error) {
          expect(isSealedSecretError(error)).toBe(true);
        }
      }),
    );
  });

  it('holds each key once, current first', () => {
    const ring = new SecretKeyRing(keyA, [keyB, keyA, keyB]);
    expect(ring.keyIds).toEqual([secretsKeyId(keyA), secretsKeyId(keyB)]);
    expect(() => new SecretKeyRing(randomBytes(16))).toThrow('32 bytes');
  });

  it('parses the previous keys list: comma-separated base64 keys, blanks ignored', () => {
    const list = `${keyA.toString('base64')}, ${keyB.toString('base64')} ,`;
    expect(parseSecretsKeyList(list)).toEqual([keyA, keyB]);
    expect(parseSecretsKeyList('')).toEqual([]);
    expect(() =>
      parseSecretsKeyList(`${keyA.toString('base64')},${randomBytes(16).toString('base64')}`),
    ).toThrow('key 2 of the list must be 32 bytes, base64-encoded');
    const ring = new SecretKeyRing(keyB, parseSecretsKeyList(keyA.toString('base64')));
    expect(ring.keyIds).toEqual([secretsKeyId(keyB), secretsKeyId(keyA)]);
  });
});
