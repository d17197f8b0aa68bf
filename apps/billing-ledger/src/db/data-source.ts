import type { AppDataSourceOptions } from '@meridian/platform-db';
import { BillingInitial1763740800000 } from '../migrations/1763740800000-billing-initial';
import { UsageFlushes1764000000000 } from '../migrations/1764000000000-usage-flushes';
import { UsageHourlyFillfactor1764100000000 } from '../migrations/1764100000000-usage-hourly-fillfactor';
import { BalancesHotUpdates1764200000000 } from '../migrations/1764200000000-balances-hot-updates';
import { UsageHourlyPending1764300000000 } from '../migrations/1764300000000-usage-hourly-pending';
import { LedgerReferencesChecked1764400000000 } from '../migrations/1764400000000-ledger-references-checked';
import { UsageHourlyShards1764500000000 } from '../migrations/1764500000000-usage-hourly-shards';
import { BalancesPriorAllowance1764600000000 } from '../migrations/1764600000000-balances-prior-allowance';
import { UsageJournalPartitions1764800000000 } from '../migrations/1764800000000-usage-journal-partitions';
import { UsageRetirementChunks1764900000000 } from '../migrations/1764900000000-usage-retirement-chunks';
import { BalancesAllowanceChain1765500000000 } from '../migrations/1765500000000-balances-allowance-chain';
import { IdempotencyKeys1765000000000 } from '../migrations/1765000000000-idempotency-keys';
import { ApiKeysManaged1765600000000 } from '../migrations/1765600000000-api-keys-managed';
import { AccountRequests1765700000000 } from '../migrations/1765700000000-account-requests';
import { AccountsRenewal1765800000000 } from '../migrations/1765800000000-accounts-renewal';
import { ApiKeysCreatedBy1765900000000 } from '../migrations/1765900000000-api-keys-created-by';
import { TopUpsCreatedBy1766000000000 } from '../migrations/1766000000000-top-ups-created-by';
import { ApiKeysPlanScope1766100000000 } from '../migrations/1766100000000-api-keys-plan-scope';
import { IdempotencyKeyResults1766200000000 } from '../migrations/1766200000000-idempotency-key-results';

/** The Postgres schema this app owns; no other app reads or writes it. */
export const SCHEMA = 'billing';

/**
 * No TypeORM entities: every table is reached through a repository with explicit SQL, because the
 * ledger needs ON CONFLICT / RETURNING / FOR UPDATE in one statement (docs/adr/0101). `pool`: the
 * app's DATABASE_POOL_SIZE and DATABASE_ACQUIRE_TIMEOUT_MS (unset: 20 connections, platform-db's
 * acquire timeout).
 */
export function dataSourceOptions(
  url: string,
  pool: { poolSize?: number; acquireTimeoutMs?: number } = {},
): AppDataSourceOptions {
  return {
    poolSize: pool.poolSize ?? 20,
    ...(pool.acquireTimeoutMs === undefined ? {} : { acquireTimeoutMs: pool.acquireTimeoutMs }),
    url,
    schema: SCHEMA,
    entities: [],
    migrations: [
      BillingInitial1763740800000,
      UsageFlushes1764000000000,
      UsageHourlyFillfactor1764100000000,
      BalancesHotUpdates1764200000000,
      UsageHourlyPending1764300000000,
      LedgerReferencesChecked1764400000000,
      UsageHourlyShards1764500000000,
      BalancesPriorAllowance1764600000000,
      UsageJournalPartitions1764800000000,
      UsageRetirementChunks1764900000000,
      IdempotencyKeys1765000000000,
      BalancesAllowanceChain1765500000000,
      ApiKeysManaged1765600000000,
      AccountRequests1765700000000,
      AccountsRenewal1765800000000,
      ApiKeysCreatedBy1765900000000,
      TopUpsCreatedBy1766000000000,
      ApiKeysPlanScope1766100000000,
      IdempotencyKeyResults1766200000000,
    ],
    applicationName: 'billing-ledger',
  };
}
