import { randomBytes } from 'node:crypto';
import { openSecret, parseSecretsKey, sealSecret } from './secret-box';

describe('secret box', () => {
  const key = randomBytes(32);

  it('opens what it sealed, and never shows the secret in the sealed form', () => {
    const sealed = sealSecret(key, 'whsec_abc123');
    expect(sealed).not.toContain('whsec_abc123');
    expect(openSecret(key, sealed)).toBe('whsec_abc123');
    expect(sealSecret(key, 'whsec_abc123')).not.toBe(sealed);
  });

  it('refuses the wrong key and a tampered value', () => {
    const sealed = sealSecret(key, 'whsec_abc123');
    expect(() => openSecret(randomBytes(32), sealed)).toThrow();
    const parts = sealed.split('.');
    parts[3] = Buffer.from('whsec_evil').toString('base64url');
    expect(() => openSecret(key, parts.join('.'))).toThrow();
    expect(() => openSecret(key, 'garbage')).toThrow('not a sealed secret');
  });

  it('parses a 32-byte base64 key and refuses any other length', () => {
    expect(parseSecretsKey(key.toString('base64'))).toEqual(key);
    expect(() => parseSecretsKey(randomBytes(16).toString('base64'))).toThrow('32 bytes');
  });
});
