import { startBillingLedgerProcess, type BillingLedgerAccount } from '@meridian/testing';

const OPERATOR_TOKEN = 'webhook-matcher-test-operator-token';

/** An account; `key`: API key with every scope (account, audit, webhooks). */
export type BillingAccount = BillingLedgerAccount;

export interface RunningBillingLedger {
  readonly grpcTarget: string;
  readonly baseUrl: string;
  createAccount(body: {
    plan?: string | null;
    type?: 'individual' | 'team';
    node_owner?: boolean;
    contract?: Record<string, number>;
  }): Promise<BillingAccount>;
  createKey(accountKey: string, scopes: string[]): Promise<string>;
  /** Operator plan change: billing publishes plan.changed and balance.changed. */
  setPlan(accountId: string, plan: string | null, contract?: Record<string, number>): Promise<void>;
  topUp(accountKey: string, cu: number): Promise<void>;
  /**
   * Moves billing's clock forward and waits for one ledger pass (top-ups due have cleared,
   * allowances due are reset). Needs `TEST_CLOCK_CONTROL=true` in the billing env.
   */
  advanceClock(ms: number): Promise<Date>;
  stop(): Promise<void>;
}

/**
 * The real billing-ledger as a child process (never imported: apps share contracts, not code),
 * with its own database, on the test's NATS prefix so its plan and balance events reach the
 * matcher under test. Accounts, keys, plans and top-ups go through its operator and account APIs.
 */
export async function startBillingLedger(
  natsPrefix: string,
  env: Record<string, string> = {},
): Promise<RunningBillingLedger> {
  const billing = await startBillingLedgerProcess({
    operatorToken: OPERATOR_TOKEN,
    databasePrefix: 'wh_billing',
    natsPrefix,
    env: { LEDGER_TICK_MS: '200', LOG_LEVEL: 'error', ...env },
    startTimeoutMs: 60_000,
  });
  let n = 0;
  return {
    grpcTarget: billing.grpcTarget,
    baseUrl: billing.url,
    createAccount: (body) => {
      n += 1;
      return billing.createAccount({ name: `wh-${n}`, ...body });
    },
    createKey: async (accountKey, scopes) =>
      (await billing.createKey(accountKey, `k-${scopes.join('-')}`, scopes)).key,
    async setPlan(accountId, plan, contract) {
      const body = { plan, ...(contract ? { contract } : {}) };
      await billing.call(
        'PUT',
        `/api/v1/admin/accounts/${accountId}/plan`,
        OPERATOR_TOKEN,
        body,
        200,
      );
    },
    async topUp(accountKey, cu) {
      await billing.call('POST', '/api/v1/top-ups', accountKey, { cu }, 201);
    },
    async advanceClock(ms) {
      const moved = await billing.call(
        'POST',
        '/api/v1/admin/clock/advance',
        OPERATOR_TOKEN,
        { ms },
        200,
      );
      return new Date(moved['now'] as string);
    },
    stop: () => billing.stop(),
  };
}
