import type { DataSource } from 'typeorm';
import { isDatabaseUnreachable } from './database-unreachable';

/** How often a waiter looks whether the DataSource was initialized elsewhere. */
const POLL_MS = 1_000;

/** The waits between probes of a lost connection (the last repeats). */
export const DEFAULT_PROBE_BACKOFF_MS: readonly number[] = [250, 500, 1_000, 2_000, 5_000];
/** A probe not answered in this long failed (a host that drops packets never refuses). */
export const DEFAULT_PROBE_TIMEOUT_MS = 5_000;

/** What the gate reports of an outage: one line when it starts, one when it ends. */
export interface DbOutageLog {
  lost(cause: unknown): void;
  restored(downMs: number, cause: unknown): void;
}

export interface DbJobGateOptions {
  /** Waits between probes while the connection is lost (the last repeats). */
  probeBackoffMs?: readonly number[];
  probeTimeoutMs?: number;
  log?: DbOutageLog;
}

/** What the gate reads of a DataSource: whether it connected, and `query` for the probe. */
type GatedDataSource = Pick<DataSource, 'isInitialized'> & {
  query?(sql: string): Promise<unknown>;
};

/**
 * Whether an app's jobs and message handlers may query Postgres now. Closed while the app has
 * not connected (a wrong DATABASE_URL, Postgres away at start) and while a connection it had is
 * lost (Postgres stopped or restarting, the network to it cut): every query then fails with
 * "Driver not Connected", ECONNREFUSED or "Connection terminated", which says nothing the
 * gate's one line did not. A periodic job runs its pass through `run` (skipped quietly while
 * closed; its own outage failure closes the gate, swallowed) or awaits `whenOpen`; a REST
 * failure is reported with `failed`; a JetStream consumer whose handler failed that way asks
 * `outage(error)` and holds its messages until `whenOpen` (platform-messaging's runner: a
 * message's delivery attempts are for its own faults, not Postgres's, QA). Requests are not
 * gated: they answer their own errors (503), and report the outage so it is logged once.
 *
 * A lost connection is noticed by `outage`: the error must say Postgres is out of reach
 * (`isDatabaseUnreachable`) and a probe (`SELECT 1`) must fail too; then the gate closes, logs
 * the cause once, and probes with backoff until Postgres answers, when it opens and logs how
 * long it was away. The first connection is DbModule's (retried at each /readyz).
 *
 * One per DataSource: `DbModule` provides the app's (inject `DbJobGate`), tells it when a
 * connection succeeds and gives it its log; a class that holds the DataSource itself asks
 * `DbJobGate.of(dataSource)`.
 */
export class DbJobGate {
  private static readonly gates = new WeakMap<object, DbJobGate>();
  private waiting: Array<() => void> = [];
  private lost: { sinceMs: number; cause: unknown } | undefined;
  private probing: Promise<boolean> | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private options: DbJobGateOptions = {};

  private constructor(private readonly dataSource: GatedDataSource) {}

  /** The gate of `dataSource` (made at the first ask). */
  static of(dataSource: GatedDataSource): DbJobGate {
    let gate = DbJobGate.gates.get(dataSource);
    if (gate === undefined) {
      gate = new DbJobGate(dataSource);
      DbJobGate.gates.set(dataSource, gate);
    }
    return gate;
  }

  /** DbModule (and tests): the outage log and the probe's timing. */
  configure(options: DbJobGateOptions): this {
    this.options = { ...this.options, ...options };
    return this;
  }

  /** Connected and not lost: a job's queries can run. */
  get open(): boolean {
    return this.dataSource.isInitialized && this.lost === undefined;
  }

  /**
   * Resolves once open (at once if it is): when DbModule's retry connects, when a probe of a
   * lost connection is answered, or at the next look (every `POLL_MS`) when something else
   * initialized the DataSource.
   */
  whenOpen(): Promise<void> {
    if (this.open) return Promise.resolve();
    return new Promise((resolve) => {
      const poll = setInterval(() => {
        if (this.open) this.release();
      }, POLL_MS);
      poll.unref();
      this.waiting.push(() => {
        clearInterval(poll);
        resolve();
      });
    });
  }

  /**
   * A periodic job's pass, the one way jobs meet an outage: skipped while closed (undefined,
   * nothing logged); run when open, and a failure that says Postgres is out of reach (`failed`)
   * closes the gate and is swallowed (undefined): the gate's one line says it, not a line per
   * tick. Any other failure is thrown to the job, which logs it as its own. The first pass after
   * the gate opens runs again.
   */
  async run<T>(job: () => Promise<T>): Promise<T | undefined> {
    if (!this.open) return undefined;
    try {
      return await job();
    } catch (error) {
      if (await this.failed(error)) return undefined;
      throw error;
    }
  }

  /**
   * A one-shot job (a start-up task): run once the gate is open, and again each time it opens
   * while it fails because Postgres is out of reach (reported, as `run`); its own failure is
   * thrown to it.
   */
  async runOnce<T>(job: () => Promise<T>): Promise<T> {
    for (;;) {
      await this.whenOpen();
      if (!this.open) continue;
      try {
        return await job();
      } catch (error) {
        if (!(await this.failed(error))) throw error;
      }
    }
  }

  /**
   * A job's or a request's failure, reported: whether it is the outage (`outage`, the gate
   * closed and its one line logged). Never throws.
   */
  failed(error: unknown): Promise<boolean> {
    return this.outage(error).catch(() => false);
  }

  /**
   * Whether `error` (a failed query) means Postgres is out of reach now, not that the statement
   * failed: an unreachable-class error (`isDatabaseUnreachable`) while not connected, while
   * already lost, or confirmed by a failed probe. Then the gate is closed until a probe is
   * answered (`whenOpen`). A probe that is answered means the failure was the statement's own
   * (a connection reset under it, one backend killed): false, retried as any other failure.
   */
  async outage(error: unknown): Promise<boolean> {
    if (!isDatabaseUnreachable(error)) return false;
    if (!this.dataSource.isInitialized || this.lost !== undefined) return true;
    if (await this.probe()) return false;
    this.close(error);
    return true;
  }

  /** DbModule: a connection attempt succeeded. */
  connected(): void {
    this.release();
  }

  /** DbModule at shutdown: no more probes (the DataSource is about to be destroyed). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.probeTimer);
  }

  private close(cause: unknown): void {
    if (this.lost !== undefined || this.stopped) return;
    this.lost = { sinceMs: Date.now(), cause };
    this.options.log?.lost(cause);
    this.probeLater(0);
  }

  private probeLater(attempt: number): void {
    const backoff = this.options.probeBackoffMs ?? DEFAULT_PROBE_BACKOFF_MS;
    const delay = backoff[Math.min(attempt, backoff.length - 1)] ?? 1_000;
    this.probeTimer = setTimeout(() => {
      void this.probe().then((answered) => {
        if (this.stopped) return;
        if (answered) this.reopen();
        else this.probeLater(attempt + 1);
      });
    }, delay);
    this.probeTimer.unref();
  }

  /** One `SELECT 1` at a time (every handler failing at once shares it); true if answered. */
  private probe(): Promise<boolean> {
    this.probing ??= this.ask().finally(() => (this.probing = undefined));
    return this.probing;
  }

  private async ask(): Promise<boolean> {
    const query = this.dataSource.query?.bind(this.dataSource);
    if (!query || !this.dataSource.isInitialized) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error('probe timed out')),
        this.options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([query('SELECT 1'), timeout]);
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  private reopen(): void {
    const lost = this.lost;
    if (lost === undefined) return;
    this.lost = undefined;
    this.options.log?.restored(Date.now() - lost.sinceMs, lost.cause);
    this.release();
  }

  private release(): void {
    if (!this.open) return;
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }
}
