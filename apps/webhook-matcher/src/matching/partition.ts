/**
 * Which replica owns an account (ADR 0422): FNV-1a of the account id modulo the replica count.
 * Every replica reads every block, but indexes, throttles and publishes only for its accounts,
 * so no job is published twice and an account's events budget lives in one process.
 */
export interface Partition {
  readonly index: number;
  readonly count: number;
}

export const SINGLE_PARTITION: Partition = { index: 0, count: 1 };

export function partitionOf(accountId: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < accountId.length; i++) {
    hash ^= accountId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % count;
}

export function owns(partition: Partition, accountId: string): boolean {
  return partition.count <= 1 || partitionOf(accountId, partition.count) === partition.index;
}

/** `i/n` (config MATCHER_PARTITION) → a partition; refuses nonsense at start. */
export function parsePartition(value: string): Partition {
  const m = /^(\d+)\/(\d+)$/.exec(value.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index >= count)
    throw new Error(`MATCHER_PARTITION must be i/n with 0 <= i < n, got ${JSON.stringify(value)}`);
  return { index, count };
}
