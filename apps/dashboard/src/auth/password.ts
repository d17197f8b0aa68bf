import { hash, verify, Algorithm } from '@node-rs/argon2';

/**
 * argon2id with OWASP's second recommended setting (19 MiB, 2 passes, 1 lane): about 20-40 ms
 * per hash on one core, cheap enough for sign-in, costly for an offline guesser.
 */
const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 256;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/**
 * Verifying against this when the email is unknown keeps the answer time the same as for a
 * wrong password, so timing does not tell which emails have an account.
 */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword('decoy password that never matches');
  return decoy;
}
