import { Inject, Injectable, Optional } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { DATABASE_RETRY_AFTER_SECONDS, DATABASE_UNAVAILABLE } from '@meridian/platform-http';
import { Counter, Gauge, Registry } from 'prom-client';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { KeyedQueue, KeyWaitTimeout, realTimers, type WaitTimer } from './keyed-queue';

/** AccountWrites' two turns: an account's writes, and its test deliveries. */
type Lane = 'account' | 'test_delivery';
const LANES: readonly Lane[] = ['account', 'test_delivery'];

/** Where AccountWrites' wait bound runs (tests: timers on a FakeClock). */
export const ACCOUNT_WRITES_TIMER = Symbol('ACCOUNT_WRITES_TIMER');

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
    { details: { retryAfterMs: DATABASE_RETRY_AFTER_SECONDS * 1000 } },
  );
}

/**
 * The one place an account's writes are serialised before they reach Postgres (ADR 0405). Each
 * takes the account's turn in this process first, then a pooled connection for its transaction,
 * where it still locks the account's row (other replicas). So an account's queue of writes waits
 * in memory, never on pool connections: at most one of its writes holds a connection here, and
 * every other account, the matching pipeline and the consumers keep the rest of the pool (QA: 25
 * concurrent list creates of one account held all 10 connections waiting on its row lock, and
 * every account got 503 `database_unavailable`).
 *
 * A write waits at most the pool's acquire timeout (DATABASE_ACQUIRE_TIMEOUT_MS) for its turn,
 * then fails as the pool would have: 503 `database_unavailable` (`accountBusy`). Test
 * deliveries have a turn of their own (`testDelivery`): they lock their own advisory lock and
 * not the account row, so a queue of tests never holds up a delete or a PATCH.
 *
 * On `/metrics` (README "Metrics"), labelled by `lane` (`account`, `test_delivery`) only, never
 * an account: `webhook_matcher_account_writes_waiting` (writes waiting their turn now, over every
 * account; read at scrape) and `webhook_matcher_account_writes_refused_total` (writes refused
 * after waiting their whole bound).
 */
@Injectable()
export class AccountWrites {
  private readonly queues: Record<Lane, KeyedQueue>;
  private readonly maxWaitMs: number;
  private readonly refused: Counter<'lane'>;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'DATABASE_ACQUIRE_TIMEOUT_MS'>,
    registry: Registry,
    @Optional() @Inject(ACCOUNT_WRITES_TIMER) timer: WaitTimer = realTimers,
  ) {
    // One queue per lane (keys never meet across lanes), so each lane's waiting count is its own.
    const queues = { account: new KeyedQueue(timer), test_delivery: new KeyedQueue(timer) };
    this.queues = queues;
    this.maxWaitMs = config.DATABASE_ACQUIRE_TIMEOUT_MS;
    const registers = [registry];
    new Gauge({
      name: 'webhook_matcher_account_writes_waiting',
      help:
        "Account writes waiting in this process for their account's earlier writes (ADR 0405), " +
        'over every account (lane account, or test_delivery)',
      labelNames: ['lane'],
      registers,
      collect() {
        for (const lane of LANES) this.set({ lane }, queues[lane].waitingTotal());
      },
    });
    this.refused = new Counter({
      name: 'webhook_matcher_account_writes_refused_total',
      help:
        'Account writes refused (503 database_unavailable) after waiting DATABASE_ACQUIRE_TIMEOUT_MS ' +
        'for their turn; none of them ran',
      labelNames: ['lane'],
      registers,
    });
    for (const lane of LANES) this.refused.inc({ lane }, 0);
  }

  /** `work` in one transaction, after the account's earlier writes in this process. */
  transaction<T>(accountId: string, work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.inTurn('account', accountId, work);
  }

  /** A test delivery's transaction, after the account's earlier test deliveries here. */
  testDelivery<T>(accountId: string, work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.inTurn('test_delivery', accountId, work);
  }

  /** Writes of the account waiting for their turn here (not the one running). */
  waiting(accountId: string): number {
    return this.queues.account.waiting(accountId);
  }

  private async inTurn<T>(
    lane: Lane,
    accountId: string,
    work: (m: EntityManager) => Promise<T>,
  ): Promise<T> {
    try {
      return await this.queues[lane].run(accountId, this.maxWaitMs, () =>
        this.dataSource.transaction(work),
      );
    } catch (error) {
      if (error instanceof KeyWaitTimeout) {
        this.refused.inc({ lane });
        throw accountBusy(error.waitedMs);
      }
      throw error;
    }
  }
}
