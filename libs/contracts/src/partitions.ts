import { z } from 'zod';
import type { ConsumerDeclaration } from './consumers';

/**
 * Replica i of n owning a share of the keys (ADR 0422): FNV-1a of the key modulo n. A partitioned
 * app reads through a durable of its own per partition, so which replica handles what is fixed
 * by configuration, not by who pulls first.
 */
export interface Partition {
  readonly index: number;
  readonly count: number;
}

export const SINGLE_PARTITION: Partition = { index: 0, count: 1 };

export function partitionOf(key: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % count;
}

export function owns(partition: Partition, key: string): boolean {
  return partition.count <= 1 || partitionOf(key, partition.count) === partition.index;
}

/** `i/n` (a replica's config, e.g. MATCHER_PARTITION) → a partition; refuses nonsense at start. */
export function parsePartition(value: string, name = 'partition'): Partition {
  const m = /^(\d+)\/(\d+)$/.exec(value.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index >= count)
    throw new Error(`${name} must be i/n with 0 <= i < n, got ${JSON.stringify(value)}`);
  return { index, count };
}

/** A replica's `i/n` setting (default `0/1`, one replica), parsed and checked at start. */
export const partitionSetting = z
  .string()
  .default('0/1')
  .transform((value, ctx): Partition => {
    try {
      return parsePartition(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });

/** The most replicas a partitioned role may have. */
export const MAX_PARTITIONS = 64;

/** How many replicas share a partitioned role (default 1). */
export const partitionCountSetting = z.coerce.number().int().min(1).max(MAX_PARTITIONS).default(1);

/**
 * The durable a partition reads through: the declared one with one partition, otherwise
 * `<durable>-p<i>of<n>` over the same subjects. The provisioning command creates these from the
 * deployment's partition count, the replicas use them.
 */
export function partitionedConsumer(
  declaration: ConsumerDeclaration,
  partition: Partition,
  filterOf?: (index: number) => string,
): ConsumerDeclaration {
  if (partition.count <= 1) return { ...declaration, partitionOf: declaration.durable };
  return {
    ...declaration,
    durable: `${declaration.durable}-p${partition.index}of${partition.count}`,
    // Every partition reads the whole stream (the matcher), or only its own subject.
    ...(filterOf ? { filterSubject: filterOf(partition.index) } : {}),
    partitionOf: declaration.durable,
  };
}

/** Every partition's durable of `declaration` for a deployment of `count` replicas. */
export function partitionedConsumers(
  declaration: ConsumerDeclaration,
  count: number,
  filterOf?: (index: number) => string,
): ConsumerDeclaration[] {
  return Array.from({ length: count }, (_, index) =>
    partitionedConsumer(declaration, { index, count }, filterOf),
  );
}
