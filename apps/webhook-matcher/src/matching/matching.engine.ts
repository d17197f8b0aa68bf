import {
  owns,
  type ChainBlock,
  type ChainBlocksRemoved,
  type Partition,
} from '@meridian/contracts';
import { PLANS } from '@meridian/plans';
import type { Clock } from '@meridian/time';
import { buildPayload, collectListRefs } from '@meridian/webhooks';
import type { DeliveryJobPublisher, JobRequest } from '../delivery-jobs/delivery-job.publisher';
import type { EventsBudget } from '../throttling/events-budget';
import { matchBlock } from './block-matcher';
import { ChangeFeedCursor } from './change-feed';
import { collectGarbage } from './full-gc';
import { MatchIndex } from './match-index';
import type { MatchingMetrics } from './matching-metrics';
import type { MatchingRepository, NewEvent, StoredEvent } from './matching.repository';
import { occurrenceOf } from './occurrence';
import { phasesPublishedBefore, receivesRemoval } from './removal';

/** List members loaded between two full collections during the index load (full-gc.ts). */
const LOAD_GC_EVERY = 100_000;

/** Events of blocks this far below the head are settled and forgotten (> the largest depth). */
export const KEEP_BLOCKS = 256;
const CAPS_TTL_MS = 5_000;

interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/**
 * From a CHAIN message to delivery jobs (README "Matching"). Called in stream order by one
 * ordered consumer; every step is idempotent on redelivery: events are recorded with their
 * budget decision before anything is published, and jobs carry their id as Nats-Msg-Id.
 */
export class MatchingEngine {
  readonly index = new MatchIndex();
  private cursor: ChangeFeedCursor | undefined;
  private readonly caps = new Map<string, { rate: number; burst: number; at: number }>();
  private blocksSincePrune = 0;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly repo: MatchingRepository,
    private readonly jobs: DeliveryJobPublisher,
    private readonly budget: EventsBudget,
    private readonly clock: Clock,
    private readonly partition: Partition,
    private readonly logger?: Logger,
    private readonly metrics?: MatchingMetrics,
  ) {}

  /** Builds the index from Postgres. The feed starts below the load so no change is missed. */
  async load(): Promise<void> {
    const start = await this.repo.changeFeedStart();
    const lists: string[] = [];
    for (const webhook of await this.repo.activeWebhooks()) {
      if (!owns(this.partition, webhook.accountId)) continue;
      lists.push(...this.index.upsertWebhook(webhook));
    }
    // Sized once from the lists' counts: a million addresses must not leave every outgrown
    // table behind as garbage (the matcher's RSS right after the load, bench/README.md).
    this.index.reserveListMembers(await this.repo.listEntryCount(lists));
    // The rows read are garbage as soon as they are added, yet V8 let them pile up in old space
    // through the load (RSS +140 MiB at a million members): a full collection every
    // LOAD_GC_EVERY members keeps the load's peak near the index's own size.
    let sinceGc = 0;
    for (const listId of lists) {
      const members = await this.repo.listEntries(listId);
      this.index.addListEntries(listId, members);
      sinceGc += members.length;
      if (sinceGc >= LOAD_GC_EVERY) {
        collectGarbage();
        sinceGc = 0;
      }
    }
    this.cursor = new ChangeFeedCursor(start);
    await this.applyChanges();
    // The load's last rows are garbage now; give the memory back before serving (full-gc.ts).
    if (lists.length > 0) collectGarbage();
    this.logger?.info(
      { webhooks: this.index.webhookCount, addresses: this.index.addressCount },
      'match index loaded',
    );
  }

  /** Applies committed webhook and list changes to the index (before each block, and every ~250 ms). */
  syncChanges(): Promise<void> {
    return this.serial(() => this.applyChanges());
  }

  handleBlock(block: ChainBlock): Promise<void> {
    return this.serial(() => this.matchAndPublish(block));
  }

  handleRemoved(message: ChainBlocksRemoved): Promise<void> {
    return this.serial(() => this.removeEvents(message));
  }

  /** One thing at a time: the index never changes in the middle of a block. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work);
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async applyChanges(): Promise<void> {
    if (!this.cursor) return;
    const fresh = this.cursor.accept(await this.repo.changesAfter(this.cursor.position));
    const webhooks = new Set<string>();
    const lists = new Set<string>();
    for (const row of fresh) {
      if (!owns(this.partition, row.accountId)) continue;
      if (row.webhookId) webhooks.add(row.webhookId);
      if (row.listId) lists.add(row.listId);
    }
    for (const id of webhooks) await this.reloadWebhook(id);
    for (const id of lists)
      if (this.index.isListReferenced(id))
        this.index.replaceList(id, await this.repo.listEntries(id));
  }

  private async reloadWebhook(id: string): Promise<void> {
    const webhook = await this.repo.activeWebhook(id);
    if (!webhook || !owns(this.partition, webhook.accountId)) {
      this.index.removeWebhook(id);
      return;
    }
    // Load new lists before the webhook replaces its old version, so a list shared with the
    // previous version never has a window without members.
    const staged = new Map<string, string[]>();
    for (const listId of collectListRefs(webhook.tree))
      if (!this.index.isListReferenced(listId))
        staged.set(listId, await this.repo.listEntries(listId));
    for (const listId of this.index.upsertWebhook(webhook))
      this.index.addListEntries(
        listId,
        staged.get(listId) ?? (await this.repo.listEntries(listId)),
      );
  }

  private async matchAndPublish(block: ChainBlock): Promise<void> {
    // Two independent reads in one round trip's time (block → job latency, bench/README.md).
    const [, recorded] = await Promise.all([
      this.applyChanges(),
      this.repo.eventsOfBlocks(block.network, [block.hash.toLowerCase()]),
    ]);
    const matched = matchBlock(this.index, block);
    const known = new Map(recorded.map((e) => [`${e.webhookId}:${e.eventId}`, e]));
    const fresh: NewEvent[] = [];
    let rateLimited = 0;
    for (const m of matched) {
      const eventId = occurrenceOf(m.webhook.id, m.eventId, m.key, known);
      if (eventId === null) continue;
      const limit = await this.eventCaps(m.webhook.accountId);
      // At the block's time, not ours: a backlog matched late is judged at the chain's pace.
      const dropped = !this.budget.admit(m.webhook.accountId, limit, block.timestamp);
      if (dropped) rateLimited += 1;
      fresh.push({
        webhookId: m.webhook.id,
        eventId,
        accountId: m.webhook.accountId,
        network: block.network,
        blockNumber: block.number,
        blockHash: block.hash,
        phases: m.webhook.phases,
        confirmDepth: m.webhook.confirmDepth,
        dropped,
        payload: buildPayload({
          webhookId: m.webhook.id,
          eventId,
          type: m.webhook.triggerType,
          network: block.network,
          phase: 'unconfirmed',
          block: { number: block.number, hash: block.hash, timestamp: block.timestamp },
          activity: m.activity,
        }),
      });
    }
    // Drops leave their delivery-log rows in the same statement batch (ADR 0433).
    await this.repo.recordEvents(fresh, this.clock.now());
    // Counted once recorded: a retry of this block finds them known and does not count them.
    this.metrics?.eventsRecorded(block.network, { matched: fresh.length, rateLimited });
    const events = [...known.values(), ...fresh.map(storedOf)].filter(
      (e) => owns(this.partition, e.accountId) && !e.dropped && e.state !== 'removed',
    );
    await this.publish(
      block.network,
      events
        .filter((e) => e.phases.includes('unconfirmed'))
        .map((e) => this.request(e, 'unconfirmed')),
    );
    await this.confirmUpTo(block.network, block.number);
    if (++this.blocksSincePrune >= 64) {
      this.blocksSincePrune = 0;
      await this.repo.prune(block.network, block.number - KEEP_BLOCKS);
    }
    this.metrics?.blockMatched(block);
  }

  /** Publishes a batch of one network's jobs and counts what it came to (README "Metrics"). */
  private publish(network: string, requests: readonly JobRequest[]): Promise<void> {
    return this.jobs.publishAll(requests, (tally) => this.metrics?.jobsSettled(network, tally));
  }

  /** Publishes the confirmed phase of every pending event the head has buried deep enough. */
  async confirmUpTo(network: string, head: number): Promise<void> {
    const due = (await this.repo.dueConfirmations(network, head)).filter((e) =>
      owns(this.partition, e.accountId),
    );
    if (due.length === 0) return;
    await this.publish(
      network,
      due.map((e) => this.request(e, 'confirmed')),
    );
    await this.repo.setState(due, 'confirmed', 'pending');
  }

  /**
   * A reorg: every event of the removed blocks gets a `removed` job for webhooks subscribed to
   * the unconfirmed phase (also one it never received: dropped over budget or failed) and for
   * confirmed-only webhooks whose confirmed delivery was published (`receivesRemoval`, ADR 0421
   * amendment); every pending confirmation is cancelled. Same eventId as the event's other
   * deliveries. Occurrences removed by an earlier reorg of the same block (it left, came back,
   * leaves again) were corrected then and are not corrected twice.
   */
  private async removeEvents(message: ChainBlocksRemoved): Promise<void> {
    const events = (
      await this.repo.eventsOfBlocks(
        message.network,
        message.removed.map((b) => b.hash.toLowerCase()),
      )
    ).filter((e) => owns(this.partition, e.accountId) && e.state !== 'removed');
    await this.publish(
      message.network,
      events.filter(receivesRemoval).map((e) => this.request(e, 'removed')),
    );
    await this.repo.setState(events, 'removed');
    this.metrics?.removalHandled(message.network);
    this.logger?.info(
      { network: message.network, blocks: message.removed.length, events: events.length },
      'reorg: events removed',
    );
  }

  /**
   * A job of the event. Its target, for the delivery route, is the indexed webhook's (the row
   * the change feed applied before this block); a webhook no longer indexed (paused or deleted
   * since the event) has none here, and its route comes from the status mirror (ADR 0432).
   */
  private request(e: StoredEvent, phase: JobRequest['phase']): JobRequest {
    const targetUrl = this.index.webhook(e.webhookId)?.targetUrl;
    return {
      webhookId: e.webhookId,
      accountId: e.accountId,
      eventId: e.eventId,
      phase,
      payload: e.payload,
      earlierPhases: phasesPublishedBefore(e, phase),
      ...(targetUrl === undefined ? {} : { targetUrl }),
    };
  }

  private async eventCaps(accountId: string): Promise<{ ratePerSecond: number; burst: number }> {
    const now = this.clock.now().getTime();
    let caps = this.caps.get(accountId);
    if (!caps || now - caps.at > CAPS_TTL_MS) {
      const read = await this.repo.eventCaps(accountId);
      const free = PLANS.free.webhooks;
      caps = {
        rate: read?.rate ?? free.eventsPerSecond,
        burst: read?.burst ?? free.eventsBurst,
        at: now,
      };
      this.caps.set(accountId, caps);
    }
    return { ratePerSecond: caps.rate, burst: caps.burst };
  }
}

function storedOf(e: NewEvent): StoredEvent {
  return {
    webhookId: e.webhookId,
    eventId: e.eventId,
    accountId: e.accountId,
    phases: [...e.phases],
    dropped: e.dropped,
    state: !e.dropped && e.phases.includes('confirmed') ? 'pending' : 'done',
    payload: e.payload,
  };
}
