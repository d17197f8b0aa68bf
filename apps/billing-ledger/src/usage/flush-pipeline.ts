import type { UsageFlushedV2 } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { isDataException } from '@meridian/platform-db';
import type { FlushDelivery, FlushOutcome } from '../ledger/ledger.service';
import { FlushAccumulator, type FlushAggregate } from './flush-aggregate';

/**
 * Applies a batch: one outcome per delivery, in order. `aggregate` is the batch's parts already
 * summed; absent (a part of a batch being isolated), the apply sums them itself.
 */
export type ApplyFlushBatch = (
  deliveries: readonly FlushDelivery[],
  aggregate?: FlushAggregate,
) => Promise<FlushOutcome[]>;

interface Waiting {
  delivery: FlushDelivery;
  resolve: (outcome: FlushOutcome) => void;
  reject: (error: unknown) => void;
}

/**
 * One usage transaction at a time, the next one prepared while it runs (ADR 0104). A flush part
 * is summed into the next batch the moment it arrives (FlushAccumulator), so by the time the
 * running transaction commits, the next batch's per-account sums are ready and its transaction
 * starts at once: the event loop sums while Postgres writes, instead of each waiting for the
 * other. Everything that arrived during a transaction is the next batch (no size cap: the
 * consumer's `concurrency` bounds the messages in flight). Each caller's promise settles after
 * the commit that carried its part; when a transaction fails, every caller of that batch gets
 * the error (its message is redelivered) and later batches are served as usual.
 *
 * Except when it failed on its data (`isDataException`): then one part cannot be stored, and
 * its batch-mates, redelivered with it on the same backoff, would fail with it on every
 * delivery until all of them were dead-lettered. The batch is applied again in halves, each
 * half that fails on its data split again, so the other parts commit at once and the part that
 * fails alone is refused for good (`unappliable_usage`: dead-lettered with Postgres's reason).
 */
export class FlushPipeline {
  private waiting: Waiting[] = [];
  private next = new FlushAccumulator();
  /** Part ids summed into `next` (a copy arriving in the same batch is summed once). */
  private ids = new Set<string>();
  private running = false;

  constructor(private readonly apply: ApplyFlushBatch) {}

  /** Parts waiting for the next transaction. */
  get pending(): number {
    return this.waiting.length;
  }

  /**
   * Sums `flush` (the part's decoded body, compact) into the next batch at once; only `delivery` (its
   * part: header, totals, bytes) is kept until the commit, so the body's objects die young.
   */
  submit(delivery: FlushDelivery, flush: UsageFlushedV2): Promise<FlushOutcome> {
    return new Promise<FlushOutcome>((resolve, reject) => {
      this.waiting.push({ delivery, resolve, reject });
      if (!this.ids.has(delivery.part.id)) {
        this.ids.add(delivery.part.id);
        this.next.add(flush, delivery.part);
      }
      if (!this.running) {
        this.running = true;
        // setImmediate: parts that arrive in the same turn share the first transaction.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting;
      const aggregate = this.next.result();
      this.waiting = [];
      this.next = new FlushAccumulator();
      this.ids = new Set();
      await this.settle(batch, aggregate);
    }
    this.running = false;
  }

  private async settle(batch: readonly Waiting[], aggregate?: FlushAggregate): Promise<void> {
    try {
      const outcomes = await this.apply(
        batch.map((w) => w.delivery),
        aggregate,
      );
      batch.forEach((w, i) => w.resolve(outcomes[i]!));
    } catch (error) {
      if (!isDataException(error)) for (const w of batch) w.reject(error);
      else if (batch.length === 1) batch[0]!.reject(unappliableUsage(error));
      else {
        const half = Math.ceil(batch.length / 2);
        await this.settle(batch.slice(0, half));
        await this.settle(batch.slice(half));
      }
    }
  }
}

/** A usage message Postgres cannot store, alone: dead-lettered for good with Postgres's reason. */
export function unappliableUsage(error: unknown): DomainError {
  const reason = error instanceof Error ? error.message : String(error);
  return new DomainError(
    'unappliable_usage',
    'invalid',
    `usage part cannot be applied: ${reason}`,
    { retryable: false, cause: error },
  );
}
