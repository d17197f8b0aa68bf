import { windowRetryAfterMs, type WindowRule } from '@meridian/rate-limits';
import { sha256 } from './secrets';

/**
 * Sign-in throttling (ADR 0601 amendment "Sign-in throttle: no lock-out by others"), as OWASP's
 * Authentication and Credential Stuffing cheat sheets put it: the lock is per (account, client
 * address), so failures from elsewhere never lock the account's owner out; a much higher
 * ceiling per account stops guessing spread over many addresses; a limit per address stops one
 * address trying many accounts. An address the account signed in from lately (`known`) is held
 * by its own pair's lock only: neither someone guessing the account from elsewhere nor someone
 * else behind the same address (an office NAT, the operator's own machine) locks it out.
 */
export interface SignInLimits {
  /** Failures of one email from one client address: the lock. */
  pair: WindowRule;
  /** Failures of one email from every address: distributed guessing. */
  account: WindowRule;
  /** Failures from one address for every email: one address trying many accounts. */
  address: WindowRule;
  /** How long a successful sign-in makes its (email, address) known. */
  knownMs: number;
}

/** The rows a sign-in is throttled by (`dashboard.login_failures` keys). */
export interface SignInKeys {
  pair: string;
  account: string;
  address: string;
  /** A row here after `now - knownMs`: the email signed in from this address. */
  known: string;
}

export function signInThrottleKeys(email: string, clientAddress: string): SignInKeys {
  const account = `email:${email.toLowerCase()}`;
  return {
    pair: `${account}:ip:${clientAddress}`,
    account,
    address: `ip:${clientAddress}`,
    known: `known:${email.toLowerCase()}:ip:${clientAddress}`,
  };
}

/**
 * Ms the sign-in waits (0: go ahead) given each key's failures in its window: the pair's always,
 * the account's and the address's unless the pair is known. The longest wait wins.
 */
export function signInWaitMs(
  failures: { pair: readonly Date[]; account: readonly Date[]; address: readonly Date[] },
  known: boolean,
  now: Date,
  limits: SignInLimits,
): number {
  const pair = windowRetryAfterMs(failures.pair, now, limits.pair);
  if (known) return pair;
  return Math.max(
    pair,
    windowRetryAfterMs(failures.account, now, limits.account),
    windowRetryAfterMs(failures.address, now, limits.address),
  );
}

/**
 * The sign-up throttle's keys: `count`, whose rows in the window are the client address's
 * sign-ups, and `attempt`, one sign-up (an email from that address). A sign-up sent again in the
 * window (a double submit answered 409 `sign_up_in_progress` or `email_taken`, a retry that
 * replays the email's stored billing request, ADR 0601 amendment) is the same attempt: it counts
 * once, and is not refused for the address's budget that its first sending already used.
 */
export function signUpThrottleKeys(
  clientAddress: string,
  email: string,
): { count: string; attempt: string } {
  const count = `signup-ip:${clientAddress}`;
  return { count, attempt: `${count}:email:${sha256(email)}` };
}
