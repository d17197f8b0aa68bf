import { Inject, Injectable, Optional } from '@nestjs/common';
import { AccountTurns, realTimers, type WaitTimer } from '@meridian/platform-db';
import { Registry } from 'prom-client';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';

/** AccountWrites' two turns: an account's writes, and its test deliveries. */
type Lane = 'account' | 'test_delivery';
const LANES: readonly Lane[] = ['account', 'test_delivery'];

/** Where AccountWrites' wait bound runs (tests: timers on a FakeClock). */
export const ACCOUNT_WRITES_TIMER = Symbol('ACCOUNT_WRITES_TIMER');

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
 * then fails as the pool would have: 503 `database_unavailable` (platform-db's `AccountTurns`,
 * shared with billing-ledger, and `accountBusy`). Test
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
  private readonly turns: AccountTurns<Lane>;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'DATABASE_ACQUIRE_TIMEOUT_MS'>,
    registry: Registry,
    @Optional() @Inject(ACCOUNT_WRITES_TIMER) timer: WaitTimer = realTimers,
  ) {
    this.turns = new AccountTurns({
      lanes: LANES,
      maxWaitMs: config.DATABASE_ACQUIRE_TIMEOUT_MS,
      registry,
      metricPrefix: 'webhook_matcher',
      timer,
    });
  }

  /** `work` in one transaction, after the account's earlier writes in this process. */
  transaction<T>(accountId: string, work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.turns.run('account', accountId, () => this.dataSource.transaction(work));
  }

  /** A test delivery's transaction, after the account's earlier test deliveries here. */
  testDelivery<T>(accountId: string, work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.turns.run('test_delivery', accountId, () => this.dataSource.transaction(work));
  }

  /** Writes of the account waiting for their turn here (not the one running). */
  waiting(accountId: string): number {
    return this.turns.waiting('account', accountId);
  }
}
