import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const newSecret = (bytes = 32): string => randomBytes(bytes).toString('base64url');

export const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export const newId = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`;
