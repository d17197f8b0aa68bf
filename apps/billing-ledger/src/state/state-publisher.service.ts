import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import {
  Consumers,
  DeadLetterSchema,
  Events,
  KvBuckets,
  revokedCredentialKey,
  type CredentialRevoked,
} from '@meridian/contracts';
import { DbJobGate } from '@meridian/platform-db';
import { JetStreamPublisher, NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { LOGGER } from '@meridian/platform-observability';
import type { Clock } from '@meridian/time';
import { Kvm, type KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { CLOCK } from '../clock/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { ChangeSignal } from '../ledger/change-signal';
import type { BalanceRow } from '../ledger/ledger.repository';
import { OutboxRepository, type OutboxRow } from '../outbox/outbox.repository';
import { PartitionTakeover } from '../usage/partition-takeover.service';
import { balanceStateJson, balanceStateOf } from './account-state';
import { KvBatchPut } from './kv-batch-put';
import { PassThrottle, STATE_PASS_TIMERS, type PassTimers } from './pass-throttle';
import { PendingStates } from './pending-states';
import { PublishedMarks } from './published-marks';
import { StateRepository } from './state.repository';

/** Rows read from the database per statement (outbox, unpublished versions). */
const BATCH = 500;
/**
 * Committed rows (in memory) per pass: a fleet's usage commit hands over ~10,000; put as one
 * batch of KV publishes and one marker update instead of 20 sequential round trips, which held
 * the last accounts of a commit back by the sum of them (ADR 0104).
 */
const PASS = 5_000;
/**
 * States put per turn of the event loop: a pass of a fleet's commit (~10,000) is ~150 ms of this
 * thread, which the next usage transaction's statements would otherwise wait behind.
 */
const PUT_CHUNK = 1_000;
/** After a failed pass the publisher tries again on its own, backing off to this. */
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 5_000;
/** A pass of balance states (up to BATCH puts) fails unless every put is acked within this. */
const KV_PUT_TIMEOUT_MS = 5_000;

/**
 * Gets committed changes out: the outbox (plan changes, revocations, cleared top-ups) in order,
 * then the latest balance state of every changed account into the balance-state KV bucket, and
 * as an event when the account's facts changed (anything but a charge that flipped nothing).
 *
 * Usage hands its committed rows over (ChangeSignal with rows): they are published without
 * reading the database, at most one pass per `STATE_PUBLISH_DELAY_MS` (throttled: rows that
 * arrive after a quiet interval go out at once, later ones at the end of the interval, as each
 * account's latest version), so successive changes of an account go out once; the apply path
 * never waits for NATS. (A plain delay after the first change held every commit's states for
 * that long at a fleet's shape, where a commit comes about once a second: up to a second of
 * the lag, ADR 0104.) Other changes (accounts, plans, top-ups, revocations) signal without rows and are
 * published at once from the database. The periodic tick does a full pass too, so a change NATS
 * could not take (or one lost in a crash) goes out from `published_version < version` later.
 * A failed pass is also retried on its own after a short backoff (200 ms doubling to 5 s), so a
 * NATS hiccup delays a state by that much, not by a tick (or forever when ticking is off).
 */
@Injectable()
export class StatePublisher implements OnModuleInit, OnApplicationShutdown {
  private running: Promise<void> | undefined;
  private again = false;
  /** The next pass also relays the outbox and scans the database for unpublished versions. */
  private fullDue = false;
  /** Usage passes: at most one per STATE_PUBLISH_DELAY_MS, the first at once. */
  private readonly usage: PassThrottle;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = RETRY_MIN_MS;
  private closed = false;
  private readonly pending = new PendingStates();
  private readonly buckets = new Map<string, Promise<KV>>();
  private readonly kvPut = new KvBatchPut();

  constructor(
    private readonly publisher: JetStreamPublisher,
    private readonly client: NatsClient,
    private readonly namespace: NatsNamespace,
    private readonly outbox: OutboxRepository,
    private readonly states: StateRepository,
    private readonly signal: ChangeSignal,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly marks: PublishedMarks,
    private readonly partitions: PartitionTakeover,
    private readonly db: DbJobGate,
    @Inject(STATE_PASS_TIMERS) passTimers: PassTimers,
  ) {
    this.usage = new PassThrottle(config.STATE_PUBLISH_DELAY_MS, () => void this.run(), passTimers);
  }

  onModuleInit(): void {
    this.signal.onChange((rows, flipped) => this.changed(rows, flipped));
  }

  /** Graceful stop: what waits in memory goes out now (else the next start's tick sends it). */
  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    this.usage.cancel();
    clearTimeout(this.retryTimer);
    if (this.pending.size > 0) await this.run().catch(() => undefined);
    // Marks no usage transaction took: else the next start puts those versions again.
    await this.mark(this.marks.all()).catch(() => undefined);
  }

  /**
   * A committed change: rows (usage) go out with the next throttled pass, unless an account's ok/exhausted
   * state flipped (`flipped`: the gateways must stop or resume serving it within 2 s, ADR 0104);
   * anything else goes out now.
   */
  changed(rows?: readonly BalanceRow[], flipped: ReadonlySet<string> = new Set()): void {
    if (!rows) {
      void this.flush();
      return;
    }
    this.pending.add(rows, flipped);
    if (flipped.size > 0) this.usage.runNow();
    else this.usage.request();
  }

  /** Publishes everything pending (outbox, waiting rows, unpublished versions in the database). */
  flush(): Promise<void> {
    this.fullDue = true;
    return this.run();
  }

  /** Concurrent calls share one run (and trigger one more pass). */
  private run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        const full = this.fullDue;
        this.fullDue = false;
        try {
          if (full) await this.flushOutbox();
          await this.flushPending();
          if (full) await this.flushUnpublished();
          this.retryMs = RETRY_MIN_MS;
        } catch (error) {
          // Postgres out of reach (DbJobGate): reported to the gate, whose one line says it;
          // retried quietly with the same backoff.
          if (!(await this.db.failed(error)))
            this.logger.warn(
              {
                err: error instanceof Error ? error.message : String(error),
                retryMs: this.retryMs,
              },
              'publishing changes failed; retrying',
            );
          this.buckets.clear();
          // What this pass did not get out stays due: pending rows were put back, and a full
          // pass (outbox, unpublished versions) is owed again.
          if (full) this.fullDue = true;
          this.scheduleRetry();
          break;
        }
      } while (this.again);
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.run();
    }, delay);
    this.retryTimer.unref();
  }

  private async flushOutbox(): Promise<void> {
    for (;;) {
      const rows = await this.outbox.pending(BATCH);
      if (rows.length === 0) return;
      const published: string[] = [];
      try {
        // In order: a consumer of account changes sees them as they happened.
        for (const row of rows) {
          await this.publishOutbox(row);
          published.push(row.id);
        }
      } finally {
        await this.outbox.markPublished(published, this.clock.now());
      }
      if (rows.length < BATCH) return;
    }
  }

  private async publishOutbox(row: OutboxRow): Promise<void> {
    switch (row.eventType) {
      case 'planChanged':
        await this.publisher.publish(Events.planChanged, row.payload as never);
        return;
      case 'topUpCleared':
        await this.publisher.publish(Events.topUpCleared, row.payload as never);
        return;
      case 'usageParked': {
        const letter = DeadLetterSchema.parse(row.payload);
        await this.publisher.publishJson(
          Consumers.ledgerUsage.deadLetterSubject,
          letter,
          letter.id,
        );
        return;
      }
      case 'credentialRevoked': {
        const payload = row.payload as CredentialRevoked;
        const kv = await this.bucket(KvBuckets.revokedCredentials.name);
        await kv.put(
          revokedCredentialKey(payload.credentialType, payload.credentialHash),
          JSON.stringify(payload),
        );
        await this.publisher.publish(Events.credentialRevoked, payload);
        return;
      }
    }
  }

  /** Rows handed over by usage commits, latest version per account, without a read. */
  private async flushPending(): Promise<void> {
    while (this.pending.size > 0) {
      const rows = this.pending.take(PASS);
      const announced = this.pending.takeAnnounced(rows);
      try {
        await this.publishStates(rows, (accountId) => announced.has(accountId));
      } catch (error) {
        this.pending.add(rows, announced);
        throw error;
      }
      // Marked by each account's next usage transaction, or by a full pass (PublishedMarks).
      this.marks.put(rows, this.clock.now().getTime());
    }
  }

  /**
   * Versions committed but not published (other changes, failed publishes, a crash), in id order.
   * A version this process already put into KV is not published again: its mark is written by
   * the account's next usage transaction, or here once it has waited `MARK_BY_TICK_AFTER_MS`
   * (ADR 0106). Re-publishing those from the database cost every busy account a second KV put
   * and an event on every tick (ADR 0104).
   *
   * Only the accounts whose usage this replica applies (`PartitionTakeover.applies`: its ledger
   * partition, and any it stands in for) are published from here. Another partition's busy
   * accounts trail their marker the same way, and this replica, which never put them, took them
   * for unpublished: with two partitions each replica put the other's ~5,000 busy accounts into
   * KV, with an event each, on every tick. Their own replica's pass finds what is really missing
   * there, a change this replica committed for them included (a plan change, a top-up), within a
   * tick; a replica that is gone is stood in for, and then its accounts are published here.
   */
  private async flushUnpublished(): Promise<void> {
    let after = '';
    const now = this.clock.now().getTime();
    for (;;) {
      const found = await this.states.unpublished(BATCH, after);
      if (found.length === 0) return;
      after = found.at(-1)!.accountId;
      const todo: string[] = [];
      const remark: Array<{ accountId: string; version: number }> = [];
      for (const { accountId, version } of found) {
        // Rows waiting in memory go out with the next pass, as their latest version.
        if (this.pending.has(accountId)) continue;
        if ((this.marks.versionOf(accountId) ?? 0) < version) {
          if (this.partitions.applies(accountId)) todo.push(accountId);
          // A mark left from standing in for its partition: its own replica publishes it now.
          else this.marks.drop(accountId);
        } else if (this.marks.dueForPublisher(accountId, version, now))
          remark.push({ accountId, version });
      }
      await this.mark(remark);
      if (todo.length > 0) {
        const rows = await this.states.rows(todo);
        // Read from the database: a change other than usage (account, plan, top-up), or a
        // usage state whose first try failed; each goes out with its event.
        await this.publishStates(rows, () => true);
        this.marks.put(rows, now);
        await this.mark(rows);
      }
      if (found.length < BATCH) return;
    }
  }

  /** Writes published marks; one whose row is locked stays in PublishedMarks for later. */
  private async mark(rows: ReadonlyArray<{ accountId: string; version: number }>): Promise<void> {
    if (rows.length === 0) return;
    const marked = new Set(await this.states.markPublished(rows));
    this.marks.marked(rows.filter((row) => marked.has(row.accountId)));
  }

  /**
   * Every row's state into the KV bucket (what gateways and workers read); the event only for
   * the accounts `announce` names: the webhook-matcher keeps account facts (plan, caps, ok or
   * exhausted, pending top-ups) from it, which a usage charge that flips nothing leaves as they
   * were. At a fleet's shape that is one publish per account and second instead of two, and no
   * matcher write per charge (ADR 0104).
   */
  private async publishStates(
    rows: readonly BalanceRow[],
    announce: (accountId: string) => boolean,
  ): Promise<void> {
    if (rows.length === 0) return;
    const now = this.clock.now();
    const bucket = this.namespace.bucket(KvBuckets.balanceState.name);
    const sent: Array<Promise<unknown>> = [];
    let failure: unknown;
    const settle = (p: Promise<unknown>) =>
      sent.push(p.catch((error: unknown) => (failure ??= error)));
    for (let start = 0; start < rows.length; start += PUT_CHUNK) {
      // The event loop in between: the next usage transaction's statements go out while this
      // pass writes, so Postgres works on them instead of waiting for the whole pass.
      if (start > 0) await new Promise((resolve) => setImmediate(resolve));
      const entries: Array<readonly [string, string]> = [];
      for (const row of rows.slice(start, start + PUT_CHUNK)) {
        entries.push([row.accountId, balanceStateJson(row, now)]);
        if (announce(row.accountId))
          settle(this.publisher.publish(Events.balanceStateChanged, balanceStateOf(row, now)));
      }
      settle(this.kvPut.put(this.client.require(), bucket, entries, KV_PUT_TIMEOUT_MS));
    }
    await Promise.all(sent);
    if (failure !== undefined) throw failure;
  }

  private bucket(name: string): Promise<KV> {
    let bucket = this.buckets.get(name);
    if (!bucket) {
      bucket = new Kvm(this.client.jetstream()).open(this.namespace.bucket(name));
      bucket.catch(() => this.buckets.delete(name));
      this.buckets.set(name, bucket);
    }
    return bucket;
  }
}
