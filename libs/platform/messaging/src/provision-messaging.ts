import {
  allKvBuckets,
  allStreams,
  deploymentConsumers,
  type ConsumerDeclaration,
  type KvBucketDeclaration,
  type StreamDeclaration,
} from '@meridian/contracts';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  ReplayPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { NatsNamespace } from './nats-namespace';

export type ProvisionAction = 'created' | 'updated' | 'unchanged' | 'deleted';

export interface ProvisionReportEntry {
  kind: 'stream' | 'consumer' | 'kv';
  /** Prefixed name as it exists on the server (consumers: `<stream>/<durable>`). */
  name: string;
  action: ProvisionAction;
  /** Config keys that differed (updated only). */
  changes?: string[];
}

export interface ProvisionOptions {
  /** Stream / bucket replicas (1 on a single server; 3 on a cluster). */
  replicas?: number;
  streams?: readonly StreamDeclaration[];
  consumers?: readonly ConsumerDeclaration[];
  buckets?: readonly KvBucketDeclaration[];
}

const nanos = (ms: number): number => ms * 1_000_000;

/**
 * Creates or updates every declared stream, durable consumer and KV bucket, idempotently: a
 * second run reports everything `unchanged` and touches nothing. Like a migration it runs as
 * its own step (tools/messaging/provision.ts; the deploy's provision Job), never at app start.
 * Only the keys we declare are compared, so server-side defaults never look like drift.
 */
export async function provisionMessaging(
  jsm: JetStreamManager,
  prefix: string,
  options: ProvisionOptions = {},
): Promise<ProvisionReportEntry[]> {
  const ns = new NatsNamespace(prefix);
  const replicas = options.replicas ?? 1;
  const report: ProvisionReportEntry[] = [];

  for (const stream of options.streams ?? allStreams) {
    const name = ns.stream(stream.name);
    const desired = {
      subjects: stream.subjects.map((s) => ns.subject(s)),
      description: stream.description,
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      max_age: nanos(stream.maxAgeMs),
      duplicate_window: nanos(stream.duplicateWindowMs),
      max_msg_size: stream.maxMsgSize,
      num_replicas: replicas,
    };
    const existing = await jsm.streams.info(name).catch(notFoundAsUndefined);
    if (!existing) {
      await jsm.streams.add({ name, ...desired });
      report.push({ kind: 'stream', name, action: 'created' });
      continue;
    }
    const changes = diff(desired, existing.config);
    if (changes.length > 0) await jsm.streams.update(name, { ...existing.config, ...desired });
    report.push({
      kind: 'stream',
      name,
      action: changes.length ? 'updated' : 'unchanged',
      ...(changes.length ? { changes } : {}),
    });
  }

  const consumers = options.consumers ?? deploymentConsumers();
  // Where a partitioned family's new durables start: read before any of them is created.
  const floors = new Map<string, number | undefined>();
  for (const { stream, partitionOf } of consumers)
    if (partitionOf && !floors.has(partitionOf))
      floors.set(
        partitionOf,
        await familyAckFloor(jsm, ns.stream(stream), ns.consumer(partitionOf)),
      );
  for (const consumer of consumers) {
    const stream = ns.stream(consumer.stream);
    const durable = ns.consumer(consumer.durable);
    const desired = {
      description: consumer.description,
      ack_policy: AckPolicy.Explicit,
      replay_policy: ReplayPolicy.Instant,
      filter_subject: ns.subject(consumer.filterSubject),
      ack_wait: nanos(consumer.ackWaitMs),
      max_deliver: consumer.maxDeliver,
      // Ordered consumers (concurrency 1) allow one unacked message across all replicas, so a
      // nak'd message can't be overtaken; others allow every replica its parallelism.
      max_ack_pending: consumer.concurrency === 1 ? 1 : consumer.concurrency * 16,
    };
    let existing = await jsm.consumers.info(stream, durable).catch(notFoundAsUndefined);
    const name = `${stream}/${durable}`;
    // A partitioned family's durable whose subjects change with the partition count (the
    // ledger's unpartitioned usage durable, ADR 0105 step 3) starts again from the family's
    // floor: updated in place it would go on from its own position and never see what its new
    // subjects hold behind it, which the family's other durables may not have acked yet.
    let recreated = false;
    if (
      existing &&
      consumer.partitionOf &&
      existing.config.filter_subject !== desired.filter_subject
    ) {
      await jsm.consumers.delete(stream, durable);
      existing = undefined;
      recreated = true;
    }
    if (!existing) {
      const start = consumer.partitionOf ? floors.get(consumer.partitionOf) : undefined;
      await jsm.consumers.add(stream, {
        durable_name: durable,
        ...desired,
        ...(start === undefined
          ? { deliver_policy: DeliverPolicy.All }
          : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start + 1 }),
      });
      report.push({
        kind: 'consumer',
        name,
        action: recreated ? 'updated' : 'created',
        ...(recreated || start !== undefined
          ? {
              changes: [
                ...(recreated ? ['filter_subject (recreated)'] : []),
                ...(start === undefined ? [] : [`starts after ${start}`]),
              ],
            }
          : {}),
      });
      continue;
    }
    const changes = diff(desired, existing.config);
    if (changes.length > 0) await jsm.consumers.update(stream, durable, desired);
    report.push({
      kind: 'consumer',
      name,
      action: changes.length ? 'updated' : 'unchanged',
      ...(changes.length ? { changes } : {}),
    });
  }

  // A partitioned family keeps only the durables declared now (their replicas were stopped to
  // change the count, ADR 0422); the new ones started after the old ones' floor above.
  for (const base of floors.keys()) {
    const members = consumers.filter((c) => c.partitionOf === base);
    const stream = ns.stream(members[0]!.stream);
    const declared = new Set(members.map((c) => ns.consumer(c.durable)));
    for (const { name: durable } of await familyOf(jsm, stream, ns.consumer(base))) {
      if (declared.has(durable)) continue;
      await jsm.consumers.delete(stream, durable);
      report.push({ kind: 'consumer', name: `${stream}/${durable}`, action: 'deleted' });
    }
  }

  const kvm = new Kvm(jsm.jetstream());
  for (const bucket of options.buckets ?? allKvBuckets) {
    const name = ns.bucket(bucket.name);
    const streamName = `KV_${name}`;
    const existing = await jsm.streams.info(streamName).catch(notFoundAsUndefined);
    if (!existing) {
      await kvm.create(name, {
        description: bucket.description,
        history: bucket.history,
        ttl: bucket.ttlMs,
        maxValueSize: bucket.maxValueSize,
        storage: StorageType.File,
        replicas,
      });
      report.push({ kind: 'kv', name, action: 'created' });
      continue;
    }
    const desired = {
      description: bucket.description,
      max_msgs_per_subject: bucket.history,
      max_age: nanos(bucket.ttlMs),
      max_msg_size: bucket.maxValueSize,
    };
    const changes = diff(desired, existing.config);
    if (changes.length > 0)
      await jsm.streams.update(streamName, { ...existing.config, ...desired });
    report.push({
      kind: 'kv',
      name,
      action: changes.length ? 'updated' : 'unchanged',
      ...(changes.length ? { changes } : {}),
    });
  }

  return report;
}

/** Whether `name` is `base` or one of its partitions' durables, `base-p<i>of<n>`. */
function inFamily(name: string, base: string): boolean {
  return name === base || (name.startsWith(base) && /^-p\d+of\d+$/.test(name.slice(base.length)));
}

/** The family's durables on `stream`, with the stream sequence each has acked up to. */
async function familyOf(
  jsm: JetStreamManager,
  stream: string,
  base: string,
): Promise<{ name: string; ackFloor: number }[]> {
  const members: { name: string; ackFloor: number }[] = [];
  for await (const info of jsm.consumers.list(stream)) {
    const name = info.config.durable_name ?? info.name;
    // With nothing delivered and unacked, everything up to the delivered position is done: the
    // server's ack floor stays 0 on a durable that was created at a start sequence and has not
    // acked since, or whose filter matched nothing yet (a new family would re-read the stream).
    const ackFloor =
      info.num_ack_pending === 0
        ? Math.max(info.ack_floor.stream_seq, info.delivered.stream_seq)
        : info.ack_floor.stream_seq;
    if (inFamily(name, base)) members.push({ name, ackFloor });
  }
  return members;
}

/** The oldest stream sequence every existing durable of the family acked (undefined: none). */
async function familyAckFloor(
  jsm: JetStreamManager,
  stream: string,
  base: string,
): Promise<number | undefined> {
  const members = await familyOf(jsm, stream, base);
  return members.length ? Math.min(...members.map((m) => m.ackFloor)) : undefined;
}

function diff(desired: Record<string, unknown>, actual: object): string[] {
  const current = actual as Record<string, unknown>;
  return Object.keys(desired).filter(
    (key) => JSON.stringify(desired[key]) !== JSON.stringify(current[key]),
  );
}

function notFoundAsUndefined(error: unknown): undefined {
  const message = error instanceof Error ? error.message : String(error);
  if (/not found/i.test(message)) return undefined;
  throw error;
}
