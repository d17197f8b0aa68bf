import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * A key ring for sealed secrets (ADR 0424): the current key seals, every key of the ring opens.
 * Webhook signing secrets (WEBHOOK_SECRETS_KEY) and the dashboard's accounts' API keys
 * (DASHBOARD_SECRETS_KEY, ADR 0603) are sealed through it, each under its own keys. A value sealed here names its key:
 * `v2.<key id>.<base64url iv>.<base64url tag>.<base64url ciphertext>`, the `v2.<key id>`
 * prefix bound into the tag as associated data. `v1` values (`sealSecret`, no key id) stay
 * readable: each key of the ring is tried, current first.
 */
const V1 = 'v1';
const V2 = 'v2';
const IV_BYTES = 12;
/** The key id: 8 base64url characters (48 bits) of a SHA-256 of the key, domain-separated. */
const KEY_ID_BYTES = 6;
const KEY_ID_DOMAIN = 'meridian webhook secrets key id\0';

export type SealedSecretFailure = 'malformed' | 'unknown_key' | 'not_opened';

/**
 * A sealed value the ring cannot open: `malformed` (not a sealed secret), `unknown_key` (sealed
 * under a key id the ring does not hold), `not_opened` (a key the ring holds, or for a `v1`
 * value every key, failed the tag check: tampered, or a `v1` value under a key it lacks).
 */
export class SealedSecretError extends Error {
  constructor(
    readonly reason: SealedSecretFailure,
    /** The key id the value names (`v2`), or null (`v1`, malformed). */
    readonly keyId: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'SealedSecretError';
  }
}

export function isSealedSecretError(error: unknown): error is SealedSecretError {
  return error instanceof SealedSecretError;
}

/** The short public id of a key: safe to log and to store beside the values it sealed. */
export function secretsKeyId(key: Buffer): string {
  return createHash('sha256')
    .update(KEY_ID_DOMAIN)
    .update(key)
    .digest()
    .subarray(0, KEY_ID_BYTES)
    .toString('base64url');
}

/** WEBHOOK_SECRETS_KEY: 32 bytes, base64. */
export function parseSecretsKey(base64: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== 32) throw new Error('WEBHOOK_SECRETS_KEY must be 32 bytes, base64-encoded');
  return key;
}

/**
 * A comma-separated list of keys (32 bytes each, base64), as WEBHOOK_SECRETS_PREVIOUS_KEYS
 * holds them; blanks around commas are ignored, an empty list is allowed. Throws naming the
 * position of a bad key.
 */
export function parseSecretsKeyList(value: string): Buffer[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  return items.map((item, index) => {
    try {
      return parseSecretsKey(item);
    } catch {
      throw new Error(`key ${index + 1} of the list must be 32 bytes, base64-encoded`);
    }
  });
}

/** The key id a sealed value names: null for a `v1` value; throws if it is no sealed value. */
export function sealedKeyId(sealed: string): string | null {
  return parse(sealed).keyId;
}

export interface SecretKeyRingOptions {
  /** The setting that holds the previous keys, named when a value's key is missing. */
  previousKeysSetting?: string;
}

export class SecretKeyRing {
  readonly currentKeyId: string;
  /** Every key id the ring opens, current first. */
  readonly keyIds: readonly string[];
  private readonly keys = new Map<string, Buffer>();
  private readonly previousKeysSetting: string;

  /** `previous` may repeat the current key or each other: each key is held once. */
  constructor(
    current: Buffer,
    previous: readonly Buffer[] = [],
    options: SecretKeyRingOptions = {},
  ) {
    this.previousKeysSetting = options.previousKeysSetting ?? 'WEBHOOK_SECRETS_PREVIOUS_KEYS';
    for (const key of [current, ...previous]) {
      if (key.length !== 32) throw new Error('a secrets key must be 32 bytes');
      const id = secretsKeyId(key);
      if (!this.keys.has(id)) this.keys.set(id, Buffer.from(key));
    }
    this.currentKeyId = secretsKeyId(current);
    this.keyIds = [...this.keys.keys()];
  }

  /** The prefix every value sealed under the current key starts with (for a SQL LIKE). */
  get currentPrefix(): string {
    return `${V2}.${this.currentKeyId}.`;
  }

  seal(plaintext: string): string {
    const key = this.keys.get(this.currentKeyId)!;
    const iv = randomBytes(IV_BYTES);
    const header = `${V2}.${this.currentKeyId}`;
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(header, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      header,
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      body.toString('base64url'),
    ].join('.');
  }

  /** The clear secret; throws a SealedSecretError when the ring cannot open it. */
  open(sealed: string): string {
    const parsed = parse(sealed);
    if (parsed.keyId === null) {
      for (const key of this.keys.values()) {
        const opened = tryOpen(key, parsed, null);
        if (opened !== null) return opened;
      }
      throw new SealedSecretError(
        'not_opened',
        null,
        `a v1 sealed secret opens under none of the ring's ${this.keys.size} key(s) ` +
          `(${this.keyIds.join(', ')}): sealed under another key, or tampered`,
      );
    }
    const key = this.keys.get(parsed.keyId);
    if (!key)
      throw new SealedSecretError(
        'unknown_key',
        parsed.keyId,
        `sealed under key ${parsed.keyId}, which the ring (${this.keyIds.join(', ')}) does not ` +
          `hold: add that key to ${this.previousKeysSetting}`,
      );
    const opened = tryOpen(key, parsed, `${V2}.${parsed.keyId}`);
    if (opened === null)
      throw new SealedSecretError(
        'not_opened',
        parsed.keyId,
        `a sealed secret under key ${parsed.keyId} fails its integrity check (tampered)`,
      );
    return opened;
  }

  /** Whether `sealed` is not yet sealed under the current key (a `v1` value always is not). */
  needsReseal(sealed: string): boolean {
    return !sealed.startsWith(this.currentPrefix);
  }

  /** `sealed` under the current key: itself when it already is, else opened and sealed anew. */
  reseal(sealed: string): string {
    return this.needsReseal(sealed) ? this.seal(this.open(sealed)) : sealed;
  }
}

interface Parsed {
  keyId: string | null;
  iv: Buffer;
  tag: Buffer;
  body: Buffer;
}

function parse(sealed: string): Parsed {
  const parts = sealed.split('.');
  const [version] = parts;
  const fields =
    version === V1 && parts.length === 4
      ? { keyId: null, rest: parts.slice(1) }
      : version === V2 && parts.length === 5 && parts[1] !== ''
        ? { keyId: parts[1]!, rest: parts.slice(2) }
        : null;
  if (fields === null || fields.rest[0] === '' || fields.rest[1] === '')
    throw new SealedSecretError('malformed', null, 'not a sealed secret');
  const [iv, tag, body] = fields.rest.map((p) => Buffer.from(p!, 'base64url')) as [
    Buffer,
    Buffer,
    Buffer,
  ];
  return { keyId: fields.keyId, iv, tag, body };
}

function tryOpen(key: Buffer, parsed: Parsed, aad: string | null): string | null {
  try {
    if (parsed.iv.length !== IV_BYTES || parsed.tag.length !== 16) return null;
    const decipher = createDecipheriv('aes-256-gcm', key, parsed.iv);
    if (aad !== null) decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(parsed.tag);
    return Buffer.concat([decipher.update(parsed.body), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
