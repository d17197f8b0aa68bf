import { z } from 'zod';

/**
 * JSON encoding rules shared by every event payload:
 * - CU amounts are JSON integers. Validated as safe integers: 2^53 CU is millions of times the
 *   largest monthly plan, so numbers never lose precision and consumers need no bigint parsing.
 *   (gRPC uses int64/uint64 for the same amounts; convert with Number() at that edge.)
 * - Chain quantities stay exactly as the node returned them (0x-hex strings); only the block
 *   number and timestamp of our own envelopes are JSON integers (safe for any real chain).
 * - Times are ISO-8601 UTC strings with `Z` (`new Date().toISOString()`), from 1970 on.
 * - Every payload has `id`, its idempotency id: the publisher sends it as `Nats-Msg-Id` (the
 *   stream drops a repeat within its duplicate window) and consumers de-duplicate on it.
 */
export const isoTimestamp = z.iso.datetime().refine(fromUnixEpoch, {
  message: 'a time from 1970-01-01T00:00:00Z on',
});

/**
 * The ISO format admits the year 0000, which Postgres has not (it counts 1 BC): a part of that
 * time would pass the schema and fail its transaction on every delivery. No event of ours is
 * older than the Unix epoch.
 */
function fromUnixEpoch(timestamp: string): boolean {
  return timestamp >= '1970';
}

export const cu = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** Remaining balances can dip below zero: usage is metered after the call. */
export const signedCu = z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);

export const count = z.number().int().nonnegative();

/** Value usable as a subject token or KV key segment (ids, network keys). */
export const tokenString = z
  .string()
  .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ and - only')
  .max(128);

export const idempotencyId = z.string().min(1).max(256);

export const networkKey = tokenString;
export const accountId = tokenString;

export const hexData = z.string().regex(/^0x[0-9a-fA-F]*$/, '0x-prefixed hex');
export const hexQuantity = z.string().regex(/^0x[0-9a-fA-F]+$/, '0x-prefixed hex quantity');
export const hash32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, '32-byte 0x hash');
export const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, '20-byte 0x address');
export const blockNumber = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
