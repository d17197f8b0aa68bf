import { Inject, Injectable, Optional } from '@nestjs/common';
import { AccountTurns, realTimers, type WaitTimer } from '@meridian/platform-db';
import { Registry } from 'prom-client';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';

/** Where AccountWrites' wait bound runs (unit tests: timers on a FakeClock). */
export const ACCOUNT_WRITES_TIMER = Symbol('ACCOUNT_WRITES_TIMER');

/**
 * The account API's and operator API's writes that lock an account's balance row take the
 * account's turn in this process first, then a pooled connection (platform-db `AccountTurns`,
 * ADR 0405 amendment "billing-ledger"): token creates and rolls (the plan's token cap is counted
 * under the lock), top-ups and plan changes, whoever calls them. API-key creates too: they lock
 * no account row, but a burst of them sat on the whole pool the same way. So one account's burst
 * waits in memory, at most one of its writes holds a connection here, and every other account
 * keeps the rest of the pool (QA: 100 `POST /access-tokens` of one account held the pool of 20,
 * 19 of them waiting on its row lock, and other accounts' requests waited 1–6 s).
 *
 * Not here: usage (the flush consumer locks many accounts per transaction and stays off any
 * queue: ADR 0104), the tick's clearing and resets (one account at a time), reads, and the
 * revocations (a key's revoke, a token's delete), which lock only their own credential's row.
 *
 * A write waits at most DATABASE_ACQUIRE_TIMEOUT_MS for its turn, then answers what a full pool
 * answers as long: 503 `database_unavailable`, Retry-After 2; none of it ran. On `/metrics`:
 * `billing_account_writes_waiting{lane="account"}`, `billing_account_writes_refused_total`.
 */
@Injectable()
export class AccountWrites {
  private readonly turns: AccountTurns<'account'>;

  constructor(
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'DATABASE_ACQUIRE_TIMEOUT_MS'>,
    registry: Registry,
    @Optional() @Inject(ACCOUNT_WRITES_TIMER) timer: WaitTimer = realTimers,
  ) {
    this.turns = new AccountTurns({
      lanes: ['account'],
      maxWaitMs: config.DATABASE_ACQUIRE_TIMEOUT_MS,
      registry,
      metricPrefix: 'billing',
      timer,
    });
  }

  /** `work` (which opens its transaction) after the account's earlier writes here. */
  run<T>(accountId: string, work: () => Promise<T>): Promise<T> {
    return this.turns.run('account', accountId, work);
  }

  /** Writes of the account waiting for their turn here (not the one running). */
  waiting(accountId: string): number {
    return this.turns.waiting('account', accountId);
  }
}
