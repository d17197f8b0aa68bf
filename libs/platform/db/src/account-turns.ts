import { DomainError } from '@meridian/errors';
import { Counter, Gauge, type Registry } from 'prom-client';
import { DATABASE_RETRY_AFTER_SECONDS, DATABASE_UNAVAILABLE } from './database-unreachable';
import { KeyedQueue, KeyWaitTimeout, realTimers, type WaitTimer } from './keyed-queue';

const RETRY_AFTER_MS = DATABASE_RETRY_AFTER_SECONDS * 1_000;

/**
 * A write that waited its whole bound for the account's turn: the 503 `database_unavailable`
 * (Retry-After 2) a request gets when the pool stays full as long, with a message that says
 * why. Nothing of it ran.
 */
export function accountBusy(waitedMs: number): DomainError {
  return new DomainError(
    DATABASE_UNAVAILABLE,
    'unavailable',
    `this account's other writes kept it waiting ${waitedMs} ms; retry later`,
    { details: { retryAfterMs: RETRY_AFTER_MS } },
  );
}

export interface AccountTurnsOptions<Lane extends string> {
  /** The turns an account has (keys never meet across lanes); one queue and series each. */
  lanes: readonly Lane[];
  /** The pool's acquire timeout (the app's DATABASE_ACQUIRE_TIMEOUT_MS): the longest wait. */
  maxWaitMs: number;
  registry: Registry;
  /** The app's metric prefix: `<prefix>_account_writes_waiting`, `…_refused_total`. */
  metricPrefix: string;
  /** Where the wait bound runs (unit tests: timers on a FakeClock). */
  timer?: WaitTimer;
}

/**
 * An account's writes take its turn in this process BEFORE they take a pooled connection
 * (ADR 0405): the account's queue waits in memory, and at most one of its writes (per lane)
 * holds a connection here, where it still takes the account's row lock (other replicas). So one
 * account's burst of writes never sits on the pool waiting for its own row lock while every
 * other account waits for a connection (webhook-matcher: 25 list creates held all 10; billing-
 * ledger: 100 token creates held its 20).
 *
 * A write waits at most `maxWaitMs` for its turn, then fails as the pool would have: 503
 * `database_unavailable` (`accountBusy`), none of it run.
 *
 * On `/metrics`, labelled by `lane` only, never an account: `<prefix>_account_writes_waiting`
 * (writes waiting their turn now, over every account; read at scrape) and
 * `<prefix>_account_writes_refused_total` (writes refused after waiting their whole bound).
 */
export class AccountTurns<Lane extends string> {
  private readonly queues: Map<Lane, KeyedQueue>;
  private readonly maxWaitMs: number;
  private readonly refused: Counter<'lane'>;

  constructor(options: AccountTurnsOptions<Lane>) {
    const timer = options.timer ?? realTimers;
    // One queue per lane, so each lane's waiting count is its own.
    const queues = new Map(options.lanes.map((lane) => [lane, new KeyedQueue(timer)] as const));
    this.queues = queues;
    this.maxWaitMs = options.maxWaitMs;
    const registers = [options.registry];
    new Gauge({
      name: `${options.metricPrefix}_account_writes_waiting`,
      help:
        "Account writes waiting in this process for their account's earlier writes (ADR 0405), " +
        'over every account, by lane',
      labelNames: ['lane'],
      registers,
      collect() {
        for (const [lane, queue] of queues) this.set({ lane }, queue.waitingTotal());
      },
    });
    this.refused = new Counter({
      name: `${options.metricPrefix}_account_writes_refused_total`,
      help:
        'Account writes refused (503 database_unavailable) after waiting DATABASE_ACQUIRE_TIMEOUT_MS ' +
        'for their turn; none of them ran',
      labelNames: ['lane'],
      registers,
    });
    for (const lane of options.lanes) this.refused.inc({ lane }, 0);
  }

  /** `work` (which takes the connection) once the account's earlier writes of `lane` are done. */
  async run<T>(lane: Lane, accountId: string, work: () => Promise<T>): Promise<T> {
    try {
      return await this.queue(lane).run(accountId, this.maxWaitMs, work);
    } catch (error) {
      if (error instanceof KeyWaitTimeout) {
        this.refused.inc({ lane });
        throw accountBusy(error.waitedMs);
      }
      throw error;
    }
  }

  /** Writes of the account waiting for their turn in `lane` (not the one running). */
  waiting(lane: Lane, accountId: string): number {
    return this.queue(lane).waiting(accountId);
  }

  private queue(lane: Lane): KeyedQueue {
    const queue = this.queues.get(lane);
    if (!queue) throw new Error(`no lane ${lane}`);
    return queue;
  }
}
