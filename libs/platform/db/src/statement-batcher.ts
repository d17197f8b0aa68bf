export interface StatementBatcherOptions {
  /** Items in one statement at most. */
  maxBatch?: number;
  /** Statements in flight at once (each holds a pool connection while it runs). */
  parallel?: number;
  /**
   * Runs each item of a failed statement of several again on its own (default true). Off where
   * a failure is the batch's, not an item's (a ledger transaction that lost a conflict): every
   * caller gets the error and its message is redelivered, without one statement per item. A
   * predicate decides by the error: e.g. `isDataException`, so an item Postgres cannot store
   * fails alone while a conflict fails the batch.
   */
  retryAlone?: boolean | ((error: unknown) => boolean);
}

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Shares one multi-row statement among the callers in flight: items submitted while a statement
 * runs wait for the next one (no timer: an idle caller's statement starts on the next turn of
 * the event loop, a busy one's as soon as a connection is free), so the batch size follows the
 * load. Each caller's promise settles only after the statement that carried its item
 * completed, so a caller that waits for its claim still knows it is committed.
 *
 * `run(items)` returns one result per item, in order. When a statement of several items fails,
 * each item is run again on its own, so one bad item (a constraint it breaks) fails only its
 * own caller; when Postgres is away every caller gets the error (`retryAlone: false`: every
 * caller of a failed statement gets its error at once).
 */
export class StatementBatcher<T, R> {
  private queue: Waiting<T, R>[] = [];
  private workers = 0;
  private readonly maxBatch: number;
  private readonly parallel: number;
  private readonly retryAlone: (error: unknown) => boolean;

  constructor(
    private readonly run: (items: readonly T[]) => Promise<R[]>,
    options: StatementBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 256;
    this.parallel = options.parallel ?? 2;
    const retryAlone = options.retryAlone ?? true;
    this.retryAlone = typeof retryAlone === 'function' ? retryAlone : () => retryAlone;
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.workers < this.parallel) {
        this.workers += 1;
        // setImmediate: items submitted in the same turn share the first statement.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const results = await this.run(batch.map((w) => w.item));
        batch.forEach((w, i) => w.resolve(results[i]!));
      } catch (error) {
        if (batch.length === 1 || !this.retryAlone(error)) batch.forEach((w) => w.reject(error));
        else await Promise.all(batch.map((w) => this.alone(w)));
      }
    }
    this.workers -= 1;
  }

  private async alone(waiting: Waiting<T, R>): Promise<void> {
    try {
      const [result] = await this.run([waiting.item]);
      waiting.resolve(result!);
    } catch (error) {
      waiting.reject(error);
    }
  }
}
