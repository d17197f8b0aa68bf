import type { DataSource } from 'typeorm';

/** How often a waiter looks whether the DataSource was initialized elsewhere. */
const POLL_MS = 1_000;

/**
 * Whether an app's periodic jobs (tickers, pollers, outboxes, start-up loads) may query Postgres
 * now. While the app has not connected (a wrong DATABASE_URL, Postgres away at start) every query
 * fails with TypeORM's "Driver not Connected", which tells nothing the one line of
 * `ConnectFailureLog` did not; a job that ran anyway logged it at each pass, once a second, and
 * the cause scrolled away (QA). A job asks `open` (or awaits `whenOpen`) and skips its pass
 * quietly; it runs again as soon as a connection succeeds (the retry at each /readyz, which keeps
 * reporting not ready until then). Requests are not gated: they answer their own errors.
 *
 * One per DataSource: `DbModule` provides the app's (inject `DbJobGate`) and tells it when a
 * connection succeeds; a class that holds the DataSource itself asks `DbJobGate.of(dataSource)`.
 */
export class DbJobGate {
  private static readonly gates = new WeakMap<object, DbJobGate>();
  private waiting: Array<() => void> = [];

  private constructor(private readonly dataSource: Pick<DataSource, 'isInitialized'>) {}

  /** The gate of `dataSource` (made at the first ask). */
  static of(dataSource: Pick<DataSource, 'isInitialized'>): DbJobGate {
    let gate = DbJobGate.gates.get(dataSource);
    if (gate === undefined) {
      gate = new DbJobGate(dataSource);
      DbJobGate.gates.set(dataSource, gate);
    }
    return gate;
  }

  /** Connected: a job's queries can run. */
  get open(): boolean {
    return this.dataSource.isInitialized;
  }

  /**
   * Resolves once connected (at once if it is): when DbModule's retry connects, or at the next
   * look (every `POLL_MS`) when something else initialized the DataSource.
   */
  whenOpen(): Promise<void> {
    if (this.open) return Promise.resolve();
    return new Promise((resolve) => {
      const poll = setInterval(() => {
        if (this.open) this.connected();
      }, POLL_MS);
      poll.unref();
      this.waiting.push(() => {
        clearInterval(poll);
        resolve();
      });
    });
  }

  /** Runs `work` if connected; otherwise skips it and answers undefined. */
  async run<T>(work: () => Promise<T>): Promise<T | undefined> {
    return this.open ? work() : undefined;
  }

  /** DbModule: a connection attempt succeeded. */
  connected(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }
}
