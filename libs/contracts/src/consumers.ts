import { DELIVERY_RETRY_WAITS_MS } from '@meridian/webhooks';
import {
  partitionedConsumer,
  partitionedConsumers,
  partitionOf,
  type Partition,
} from './partitions';
import {
  DeadLetterSubjects,
  deliveryRouteToken,
  ledgerPartitionToken,
  Subjects,
  type DeadLetterContext,
} from './subjects';
import type { StreamName } from './streams';

/**
 * How the runner acks a handled message:
 * - `confirmed`: `ackAck()`, a request the server answers once it recorded the ack (one round
 *   trip and one pending request per message). The default.
 * - `fire-and-forget`: plain `ack()`, published without waiting. A lost ack (connection drop,
 *   crash right after) only causes a redelivery after `ackWaitMs`, so this is only for consumers
 *   whose handlers are idempotent on the message's id (the redelivery is absorbed there).
 * Either way the ack is sent only after the handler resolved; failures still nak / term.
 */
export type AckConfirmation = 'confirmed' | 'fire-and-forget';

/**
 * Durable pull consumers, declared as data and provisioned with the streams. Every consumer
 * acks explicitly; the consumer runner of @meridian/platform-messaging maps handler outcomes:
 * success → ack (`ackConfirmation`); retryable error → nak(delay) with the delay from
 * `backoffMs`; permanent error, invalid payload or `maxDeliver` reached → term + a copy on
 * `deadLetterSubject`.
 */
export interface ConsumerDeclaration {
  /** Durable name (unprefixed); also the `@EventPattern` / handler name. */
  readonly durable: string;
  readonly stream: StreamName;
  /**
   * Unprefixed filter subject. One per consumer: the deployed NATS (2.9) has no
   * `filter_subjects`; related events share a wildcard instead (see Subjects.*.blockEvents).
   */
  readonly filterSubject: string;
  /** Who runs it (documentation; an app name under apps/). */
  readonly owner: string;
  readonly description: string;
  /**
   * Redelivery if not acked in time: longer than the slowest handler, unless
   * `workingWhileHandled`, where it is only how long a dead holder keeps its message.
   */
  readonly ackWaitMs: number;
  /**
   * Client-side only (not provisioned): the runner sends in-progress acks (`working()`) every
   * third of `ackWaitMs` while the handler runs, so a live slow handler keeps its message and
   * `ackWaitMs` can be short: a process killed while holding a message (with `concurrency` 1 it
   * holds the whole consumer back) gives it up after `ackWaitMs`, not after the slowest step.
   */
  readonly workingWhileHandled?: boolean;
  /** Deliveries in all (first + redeliveries) before the runner dead-letters the message. */
  readonly maxDeliver: number;
  /**
   * Delays of the runner's nak after delivery 1, 2, …; the last repeats. Applied client-side
   * through nak(delay) and NOT sent as the server's `backoff`, which would replace ack_wait for
   * timeout redeliveries and redeliver a slow (still running) handler after the first step.
   */
  readonly backoffMs: readonly number[];
  /** Messages handled in parallel by one replica (max_ack_pending is set from it). */
  readonly concurrency: number;
  /**
   * Client-side only (not provisioned): the messages one pull request may bring (default
   * `concurrency`), for a consumer of large messages. A pull's messages are what the server may
   * write ahead of the client's reads: while the handler keeps the event loop busy, past the
   * server's per-connection `max_pending` (64 MiB by default) it drops the connection as a slow
   * consumer, and every unacked message then waits out `ackWaitMs` before it is redelivered.
   * Keep `pullBatch` × the largest message well under it. (Pulls bounded by bytes instead,
   * `max_bytes`, stalled a steady stream of 200 KB parts for up to the pull's 30 s expiry.)
   */
  readonly pullBatch?: number;
  /** Client-side only (not provisioned): wait for the server's ack confirmation or not. */
  readonly ackConfirmation: AckConfirmation;
  readonly deadLetterSubject: string;
  /**
   * One partition's durable of the durable named here (`partitionedConsumer`): provisioning
   * creates it starting after the oldest ack floor of the family's durables that exist (the
   * declared one and its `-p<i>of<n>` siblings), so a changed replica count neither re-reads the
   * stream from its start nor skips what was not yet acked, and deletes the family's durables
   * the deployment no longer declares.
   */
  readonly partitionOf?: string;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;

function consumer(
  context: DeadLetterContext,
  declaration: Omit<ConsumerDeclaration, 'deadLetterSubject' | 'ackConfirmation'> & {
    ackConfirmation?: AckConfirmation;
  },
): ConsumerDeclaration {
  return {
    ...declaration,
    ackConfirmation: declaration.ackConfirmation ?? 'confirmed',
    deadLetterSubject: DeadLetterSubjects.of(context, declaration.durable),
  };
}

export const Consumers = {
  /** webhook-matcher: blocks and removals of every network, in order. */
  matcherChainBlocks: consumer('chain', {
    durable: 'webhook-matcher-chain-blocks',
    stream: 'CHAIN',
    filterSubject: Subjects.chain.blockEvents,
    owner: 'webhook-matcher',
    description: 'match canonical blocks and reorg removals against active webhooks',
    // Blocks must be matched in order (removal after the block it removes): one message in
    // flight (max_ack_pending 1), so the server gives the next block to nobody while one is
    // unacked. A matcher killed holding one stalled every event for this whole wait (QA: 71 s
    // at 60 s); now it is 5 s and a live step keeps its block by in-progress acks (ADR 0504).
    ackWaitMs: 5 * SECOND,
    workingWhileHandled: true,
    maxDeliver: 10,
    backoffMs: [1 * SECOND, 5 * SECOND, 15 * SECOND, 30 * SECOND, 1 * MINUTE],
    concurrency: 1,
  }),
  /** webhook-matcher: balance and plan changes (pause on no balance, plan downgrades). */
  matcherAccountChanges: consumer('billing', {
    durable: 'webhook-matcher-account-changes',
    stream: 'BILLING',
    filterSubject: Subjects.billing.accountChanges,
    owner: 'webhook-matcher',
    description: 'apply balance-state and plan changes to webhook statuses',
    ackWaitMs: 30 * SECOND,
    maxDeliver: 10,
    backoffMs: [1 * SECOND, 5 * SECOND, 15 * SECOND, 30 * SECOND, 1 * MINUTE],
    concurrency: 1,
  }),
  /** webhook-matcher: delivery outcomes (30-minute auto-pause rule, stats). */
  matcherDeliveryHealth: consumer('webhook', {
    durable: 'webhook-matcher-delivery-health',
    stream: 'WEBHOOK',
    filterSubject: Subjects.webhook.deliveryHealth.all,
    owner: 'webhook-matcher',
    description: 'record delivery outcomes for stats and the auto-pause rule',
    ackWaitMs: 30 * SECOND,
    maxDeliver: 10,
    backoffMs: [1 * SECOND, 5 * SECOND, 15 * SECOND, 30 * SECOND],
    concurrency: 16,
  }),
  /**
   * delivery-worker: delivery jobs. Attempts are counted in the job / attempt log, not by
   * JetStream deliveries, because waiting for endpoint concurrency or a cleared balance naks
   * without spending an attempt; maxDeliver is only a poison-message guard.
   */
  workerDeliveryJobs: consumer('webhook', {
    durable: 'delivery-worker-jobs',
    stream: 'WEBHOOK',
    filterSubject: Subjects.webhook.deliveryJob.all,
    owner: 'delivery-worker',
    description: 'sign and POST webhook events; retry on the delivery schedule',
    // 5 s connect + 15 s response, plus signing and bookkeeping.
    ackWaitMs: 45 * SECOND,
    // Waits are put-backs (a wait for the next scheduled attempt, a balance or an endpoint
    // that is busy), so one event sees tens of deliveries; the guard is only against poison.
    maxDeliver: 10_000,
    // The spec's waits after attempts 1–7 (the one schedule, @meridian/webhooks).
    backoffMs: DELIVERY_RETRY_WAITS_MS,
    // An endpoint holds at most 10 of these (per-URL cap; jobs above it are put back at once),
    // so 25 slow endpoints can hang for 15 s each and others still find free slots.
    concurrency: 256,
    // A lost ack redelivers a job whose attempt the worker finds in its attempt log (claimed
    // once, health re-sent under the same id): no round trip per job for the ack's confirmation.
    ackConfirmation: 'fire-and-forget',
  }),
  /**
   * billing-ledger: usage flushes (one message per producer flush part, ADR 0103) and the
   * per-account usage events they replace, each applied exactly once (ADR 0104).
   */
  ledgerUsage: consumer('billing', {
    durable: 'billing-ledger-usage',
    stream: 'BILLING',
    filterSubject: Subjects.billing.usageAll,
    owner: 'billing-ledger',
    description: 'apply metered CU to account balances',
    ackWaitMs: 30 * SECOND,
    maxDeliver: 20,
    backoffMs: [500, 1 * SECOND, 5 * SECOND, 15 * SECOND, 30 * SECOND],
    // A flush part carries up to 64 KiB (about 1,400 accounts, ADR 0105; a v1 part up to
    // 256 KiB): 256 in flight is at most 16 MiB of bodies (64 MiB of v1 bodies). billing-ledger
    // runs one transaction at a time and the next one takes everything that arrived meanwhile,
    // so this caps a transaction at about 128 parts, two fleet seconds (8 producers x 10,000
    // accounts is ~56 parts a second). A ledger that keeps up never reaches it (its batch is
    // what arrived during one transaction); one that is behind (a burst, a restart, a stop of
    // the ledger) spreads each account's journal, balance row, rollups and KV state over up to
    // two fleet seconds of usage, and catches up instead of falling further behind (ADR 0104).
    // max_ack_pending = 16 x this.
    concurrency: 256,
    // 256 parts of up to 256 KiB were pulled 256 at a time: a backlog (a restart, a burst)
    // filled the connection past NATS's 64 MiB max_pending while a transaction held the event
    // loop, the server cut it as a slow consumer and every unacked part waited 30 s (the ledger
    // bench's backlog drained at 44,000 account-items/s instead of ~150,000). A pull now brings
    // at most 32 parts (8 MiB); the next is asked as they arrive, up to `concurrency` in flight.
    pullBatch: 32,
    // Exactly once comes from the ledger's record of applied ids (written in the same
    // transaction as the CU), not from the ack: a lost ack redelivers a message the ledger then
    // finds and acks unchanged. So no round trip per message waiting for the ack's confirmation.
    ackConfirmation: 'fire-and-forget',
  }),
} as const satisfies Record<string, ConsumerDeclaration>;

export type ConsumerKey = keyof typeof Consumers;

export const allConsumers: readonly ConsumerDeclaration[] = Object.values(Consumers);

/** Looks a consumer up by durable name (the `@EventPattern` value). */
export function consumerByDurable(durable: string): ConsumerDeclaration | undefined {
  return allConsumers.find((c) => c.durable === durable);
}

/**
 * The delivery-jobs durable of delivery-worker partition i/n (ADR 0432): with one worker the
 * declared durable over every route, with n one durable per worker over its route's subject.
 */
export function deliveryJobsConsumer(partition: Partition): ConsumerDeclaration {
  return partitionedConsumer(Consumers.workerDeliveryJobs, partition, deliveryJobsFilter);
}

/** Every delivery-worker partition's durable for a deployment of `count` workers. */
export function deliveryJobsConsumers(count: number): ConsumerDeclaration[] {
  return partitionedConsumers(Consumers.workerDeliveryJobs, count, deliveryJobsFilter);
}

/**
 * The usage partitions (ADR 0107): a fixed count, so that no producer depends on how many
 * billing-ledger replicas run. A producer puts an account's usage on
 * `billing.usage.flushed.v2.u<k>`, k = `usagePartitionOf(accountId)`; ledger replica i of n reads
 * the partitions k with k mod n = i (`ledgerUsageConsumers`). Changing the replica count is then
 * a rolling change of billing-ledger alone. Changing this constant is a change of the contract
 * (deploy/README.md, "Upgrades").
 */
export const USAGE_PARTITIONS = 8;

/** The usage partition of an account: the subject its usage parts go on (ADR 0107). */
export function usagePartitionOf(accountId: string): number {
  return partitionOf(accountId, USAGE_PARTITIONS);
}

/** The billing-ledger replica i of `count` that applies the account's usage (ADR 0107). */
export function ledgerPartitionOf(accountId: string, count: number): number {
  return usagePartitionOf(accountId) % count;
}

/**
 * The usage durables billing-ledger replica i of n reads (ADR 0107): the durables of the usage
 * partitions k with k mod n = i, and for replica 0 the declared durable, narrowed to what is not
 * partitioned (per-account events and v1 parts of producers not yet upgraded). The replica's
 * usage partitions share the declared parallelism (`concurrency` parts in flight, which bounds
 * its memory and its transactions, ADR 0104), whatever n: 32 a durable for one replica of all
 * eight, 64 for one of two.
 */
export function ledgerUsageConsumers(partition: Partition): ConsumerDeclaration[] {
  const own = usagePartitionConsumers().filter((_, k) => k % partition.count === partition.index);
  const share = Math.ceil(Consumers.ledgerUsage.concurrency / own.length);
  const shared = own.map((c) => ({
    ...c,
    concurrency: share,
    pullBatch: Math.min(c.pullBatch ?? share, share),
  }));
  return partition.index === 0 ? [unpartitionedLedgerUsage(), ...shared] : shared;
}

/**
 * Every usage durable of billing-ledger, whatever its replica count: the unpartitioned one and
 * one per usage partition (`billing-ledger-usage-p<k>of8`), as provisioned: each with the
 * declared parallelism, so its `max_ack_pending` admits a replica that reads it alone.
 */
export function ledgerUsageConsumersOf(): ConsumerDeclaration[] {
  return [unpartitionedLedgerUsage(), ...usagePartitionConsumers()];
}

function usagePartitionConsumers(): ConsumerDeclaration[] {
  return partitionedConsumers(Consumers.ledgerUsage, USAGE_PARTITIONS, ledgerUsageFilter);
}

/**
 * The durables a deployment provisions (tools/messaging/provision.ts, the test harnesses): the
 * declared ones, with the partitioned roles' replaced by one per partition. `counts`: the
 * webhook-matcher and delivery-worker replica counts (default 1); billing-ledger's usage
 * durables do not depend on its replica count.
 */
export function deploymentConsumers(
  counts: { matcher?: number; delivery?: number } = {},
): ConsumerDeclaration[] {
  return Object.values(Consumers).flatMap((c): ConsumerDeclaration[] =>
    c === Consumers.matcherChainBlocks
      ? partitionedConsumers(c, counts.matcher ?? 1)
      : c === Consumers.workerDeliveryJobs
        ? deliveryJobsConsumers(counts.delivery ?? 1)
        : c === Consumers.ledgerUsage
          ? ledgerUsageConsumersOf()
          : [c],
  );
}

function unpartitionedLedgerUsage(): ConsumerDeclaration {
  return {
    ...Consumers.ledgerUsage,
    filterSubject: Subjects.billing.usageV1,
    partitionOf: Consumers.ledgerUsage.durable,
  };
}

function ledgerUsageFilter(partition: number): string {
  return Subjects.billing.usageFlushedV2.of(ledgerPartitionToken(partition));
}

function deliveryJobsFilter(route: number): string {
  return Subjects.webhook.deliveryJob.of(deliveryRouteToken(route));
}
