import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signing of a delivery (COMPAT "Webhook delivery"). Two schemes on every request, made from
 * the same secret(s):
 * - `X-Signature: t=<unix>,v1=<hex>` with hex = HMAC-SHA256(secret, "<t>." + body), the key
 *   being the secret exactly as the customer was shown it (`whsec_…`, UTF-8), one `v1` per
 *   secret (two during a rotation, current first);
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>` with
 *   HMAC-SHA256(base64-decoded part after `whsec_`, "<id>.<t>." + body), space-separated per
 *   secret, so receivers using a Standard Webhooks library verify out of the box.
 */
export const SECRET_PREFIX = 'whsec_';
/** Receivers reject timestamps further off than this (COMPAT). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export interface SignInput {
  /** Plain secrets, current first. */
  secrets: readonly string[];
  /** Stable across the retries of one event and phase (receivers de-duplicate on it). */
  messageId: string;
  timestampSeconds: number;
  body: string;
}

/** `key`: the secret as shown (`whsec_…`) or its UTF-8 bytes (`SigningKey.xSignature`). */
export function xSignatureDigest(
  key: string | Buffer,
  timestampSeconds: number,
  body: string | Uint8Array,
): string {
  return createHmac('sha256', key).update(`${timestampSeconds}.`).update(body).digest('hex');
}

/** The key bytes Standard Webhooks libraries derive from a `whsec_<base64>` secret. */
export function standardWebhooksKey(secret: string): Buffer {
  const raw = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(raw, 'base64');
}

/** `key`: the secret as shown (`whsec_…`) or its derived bytes (`SigningKey.standardWebhooks`). */
export function standardWebhooksDigest(
  key: string | Buffer,
  messageId: string,
  timestampSeconds: number,
  body: string | Uint8Array,
): string {
  return createHmac('sha256', typeof key === 'string' ? standardWebhooksKey(key) : key)
    .update(`${messageId}.${timestampSeconds}.`)
    .update(body)
    .digest('base64');
}

/**
 * A secret's keys for both schemes, derived once: the `whsec_…` string's UTF-8 bytes
 * (X-Signature) and the base64-decoded part after `whsec_` (Standard Webhooks). A sender that
 * signs with the same secret many times keeps these instead of deriving them per request.
 */
export interface SigningKey {
  readonly xSignature: Buffer;
  readonly standardWebhooks: Buffer;
}

export function signingKeyOf(secret: string): SigningKey {
  return { xSignature: Buffer.from(secret, 'utf8'), standardWebhooks: standardWebhooksKey(secret) };
}

/** Header names in lower case (HTTP/1.1 and HTTP/2 alike). */
export function signatureHeaders(input: SignInput): Record<string, string> {
  return signedHeaders(
    input.secrets.map(signingKeyOf),
    input.messageId,
    input.timestampSeconds,
    Buffer.from(input.body, 'utf8'),
  );
}

/**
 * `signatureHeaders` with keys derived beforehand (current first) and the body as the bytes
 * that are sent: each HMAC reads the same bytes, and nothing is encoded again per scheme.
 */
export function signedHeaders(
  keys: readonly SigningKey[],
  messageId: string,
  timestampSeconds: number,
  body: Uint8Array,
): Record<string, string> {
  if (keys.length === 0) throw new Error('no signing secret');
  const t = timestampSeconds;
  let x = `t=${t}`;
  let std = '';
  for (const key of keys) {
    x += `,v1=${xSignatureDigest(key.xSignature, t, body)}`;
    std += `${std === '' ? '' : ' '}v1,${standardWebhooksDigest(key.standardWebhooks, messageId, t, body)}`;
  }
  return {
    'x-signature': x,
    'webhook-id': messageId,
    'webhook-timestamp': String(t),
    'webhook-signature': std,
  };
}

/**
 * The receiver's side of `X-Signature` (what our docs tell customers to do): the timestamp is
 * within the tolerance and one of the `v1` values matches. For tests and for the docs' example.
 */
export function verifyXSignature(
  header: string,
  body: string,
  secret: string,
  nowSeconds: number,
  toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS,
): boolean {
  let t: number | undefined;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return false;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') t = /^\d+$/.test(value) ? Number(value) : undefined;
    else if (key === 'v1') candidates.push(value);
  }
  if (t === undefined || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(xSignatureDigest(secret, t, body), 'hex');
  return candidates.some((c) => {
    const got = Buffer.from(c, 'hex');
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}
