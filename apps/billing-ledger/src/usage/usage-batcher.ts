interface Waiting<T, R> {
  event: T;
  resolve: (outcome: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Groups usage messages that arrive together (the consumer handles many in parallel) into shared
 * ledger transactions: up to `maxBatch` events each, at most `parallel` transactions at once (so
 * the next batch's SQL overlaps the previous one's commit and acks). Each caller learns its own
 * outcome only after the commit, so a message is acked only once its CU are durable. Parallel
 * batches are safe: the ledger locks account rows in id order and checks idempotency keys under
 * the lock.
 */
export class UsageBatcher<T, R> {
  private queue: Waiting<T, R>[] = [];
  private workers = 0;

  constructor(
    private readonly apply: (events: readonly T[]) => Promise<R[]>,
    private readonly maxBatch = 64,
    private readonly parallel = 1,
  ) {}

  submit(event: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ event, resolve, reject });
      if (this.workers < this.parallel) {
        this.workers += 1;
        // setImmediate: events delivered in the same tick share the first batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const outcomes = await this.apply(batch.map((w) => w.event));
        batch.forEach((w, i) => w.resolve(outcomes[i]!));
      } catch (error) {
        batch.forEach((w) => w.reject(error));
      }
    }
    this.workers -= 1;
  }
}
