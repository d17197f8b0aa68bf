import { startBillingLedgerProcess, type BillingLedgerAccount } from '@meridian/testing';

const OPERATOR_TOKEN = 'audit-api-test-operator-token';

/** An account; `key`: API key with every scope (account, audit, webhooks). */
export type BillingAccount = BillingLedgerAccount;

export interface RunningBillingLedger {
  readonly grpcTarget: string;
  /** Its HTTP base (`/metrics` among others). */
  readonly url: string;
  createAccount(plan: string): Promise<BillingAccount>;
  createKey(accountKey: string, scopes: string[]): Promise<string>;
  /** A new key of the account, with its id (to delete it). */
  createKeyWithId(accountKey: string, scopes: string[]): Promise<{ id: string; key: string }>;
  /** `DELETE /api/v1/api-keys/:id`: billing publishes the key's revocation. */
  deleteKey(accountKey: string, keyId: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The real billing-ledger as a child process (never imported: apps share contracts, not code),
 * with its own test database; accounts and keys are made through its operator and account APIs.
 * `natsPrefix`: a provisioned namespace shared with the app under test (its revocation feed);
 * by default one of its own.
 */
export async function startBillingLedger(natsPrefix?: string): Promise<RunningBillingLedger> {
  const billing = await startBillingLedgerProcess({
    operatorToken: OPERATOR_TOKEN,
    databasePrefix: 'audit_billing',
    natsPrefix: natsPrefix ?? `audit_bl_${process.pid}_${Date.now().toString(36)}`,
    env: { LEDGER_TICK_MS: '0', LOG_LEVEL: 'error' },
    startTimeoutMs: 45_000,
  });
  const keyName = (scopes: string[]) => `scopes-${scopes.join('-')}`;
  return {
    grpcTarget: billing.grpcTarget,
    url: billing.url,
    createAccount: (plan) =>
      billing.createAccount({ name: `audit-${plan}`, type: 'individual', plan }),
    createKey: async (accountKey, scopes) =>
      (await billing.createKey(accountKey, keyName(scopes), scopes)).key,
    createKeyWithId: (accountKey, scopes) => billing.createKey(accountKey, keyName(scopes), scopes),
    deleteKey: async (accountKey, keyId) => {
      await billing.call('DELETE', `/api/v1/api-keys/${keyId}`, accountKey, undefined, 204);
    },
    stop: () => billing.stop(),
  };
}
