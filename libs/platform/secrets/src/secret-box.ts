import { createCipheriv, randomBytes } from 'node:crypto';
import { SecretKeyRing } from './secret-box-ring';

/**
 * Signing secrets at rest (webhook-matcher's table, the webhook-status KV bucket) are sealed
 * with AES-256-GCM under the deployment's WEBHOOK_SECRETS_KEY (32 bytes, base64 in config).
 * Format: `v1.<base64url iv>.<base64url tag>.<base64url ciphertext>`. Opening with the wrong key
 * or a tampered value throws. Webhook signing secrets are sealed through the key ring of
 * `secret-box-ring.ts` (format `v2`, naming its key, so the key can rotate: ADR 0424), which
 * still opens these `v1` values, as the dashboard's ring does the values it sealed here before
 * ADR 0603.
 */
const VERSION = 'v1';
const IV_BYTES = 12;

export function sealSecret(key: Buffer, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [
    VERSION,
    iv.toString('base64url'),
    tag.toString('base64url'),
    body.toString('base64url'),
  ].join('.');
}

/** A value of `sealSecret` (or of the key ring under this key) opened; throws if it does not open. */
export function openSecret(key: Buffer, sealed: string): string {
  return new SecretKeyRing(key).open(sealed);
}

export * from './secret-box-ring';
