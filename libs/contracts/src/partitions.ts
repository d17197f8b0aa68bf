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

/**
 * The durable a partition reads through: the declared one with one partition, otherwise
 * `<durable>-p<i>of<n>` over the same subjects. The provisioning command creates these from the
 * deployment's partition count, the replicas use them.
 */
export function partitionedConsumer(
  declaration: ConsumerDeclaration,
  partition: Partition,
): ConsumerDeclaration {
  if (partition.count <= 1) return { ...declaration, partitionOf: declaration.durable };
  return {
    ...declaration,
    durable: `${declaration.durable}-p${partition.index}of${partition.count}`,
    partitionOf: declaration.durable,
  };
}

/** Every partition's durable of `declaration` for a deployment of `count` replicas. */
export function partitionedConsumers(
  declaration: ConsumerDeclaration,
  count: number,
): ConsumerDeclaration[] {
  return Array.from({ length: count }, (_, index) =>
    partitionedConsumer(declaration, { index, count }),
  );
}
