import { startBillingLedgerProcess } from '@meridian/testing';

export const OPERATOR_TOKEN = 'dashboard-test-operator-token';

export interface RunningBillingLedger {
  /** REST base, `http://127.0.0.1:<port>/api/v1`. */
  readonly apiUrl: string;
  stop(): Promise<void>;
}

/**
 * The real billing-ledger as a child process on its own test database and NATS prefix; `env`
 * adds to or overrides its environment (`SELF_SERVICE_BILLING` is on unless it says otherwise).
 */
export async function startBillingLedger(
  env: Record<string, string> = {},
): Promise<RunningBillingLedger> {
  const billing = await startBillingLedgerProcess({
    operatorToken: OPERATOR_TOKEN,
    databasePrefix: 'dashboard_billing',
    natsPrefix: `dash_bl_${process.pid}_${Date.now().toString(36)}`,
    env: { LEDGER_TICK_MS: '0', LOG_LEVEL: 'error', ...env },
    startTimeoutMs: 45_000,
  });
  return { apiUrl: `${billing.url}/api/v1`, stop: () => billing.stop() };
}
