import { Inject, Injectable, Optional } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { DATABASE_RETRY_AFTER_SECONDS, DATABASE_UNAVAILABLE } from '@meridian/platform-http';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { KeyedQueue, KeyWaitTimeout, realTimers, type WaitTimer } from './keyed-queue';

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
 */
@Injectable()
export class AccountWrites {
  private readonly queue: KeyedQueue;
  private readonly maxWaitMs: number;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'DATABASE_ACQUIRE_TIMEOUT_MS'>,
    @Optional() @Inject(ACCOUNT_WRITES_TIMER) timer: WaitTimer = realTimers,
  ) {
    this.queue = new KeyedQueue(timer);
    this.maxWaitMs = config.DATABASE_ACQUIRE_TIMEOUT_MS;
  }

  /** `work` in one transaction, after the account's earlier writes in this process. */
  transaction<T>(accountId: string, work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.inTurn(`account:${accountId}`, work);
  }

  /** A test delivery's transaction, after the account's earlier test deliveries here. */
  testDelivery<T>(accountId: string, work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.inTurn(`test-deliveries:${accountId}`, work);
  }

  /** Writes of the account waiting for their turn here (not the one running). */
  waiting(accountId: string): number {
    return this.queue.waiting(`account:${accountId}`);
  }

  private async inTurn<T>(key: string, work: (m: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await this.queue.run(key, this.maxWaitMs, () => this.dataSource.transaction(work));
    } catch (error) {
      if (error instanceof KeyWaitTimeout) throw accountBusy(error.waitedMs);
      throw error;
    }
  }
}
