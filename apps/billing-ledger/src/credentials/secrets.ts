import { createHash, randomBytes } from 'node:crypto';

/** Prefix of API keys (REST APIs); access tokens carry none (they are a URL path segment). */
export const API_KEY_PREFIX = 'mrd_';

/** sha256 hex of a secret: the only form in which credentials are stored (and what caches key by). */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** 256 random bits: a sha256 of it is safe to store without a slow KDF (nothing to brute-force). */
export function newApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** 160 random bits as 40 hex characters, safe as a URL path segment. */
export function newAccessToken(): string {
  return randomBytes(20).toString('hex');
}

/** What lists show so a user can tell credentials apart: never enough to use one. */
export function hintOf(secret: string): string {
  return `${secret.slice(0, secret.startsWith(API_KEY_PREFIX) ? API_KEY_PREFIX.length + 4 : 4)}…${secret.slice(-4)}`;
}

export function newId(prefix: 'acc' | 'key' | 'tok' | 'top' | 'bat'): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}
