import type { AppDataSourceOptions } from '@meridian/platform-db';
import { WebhooksInitial1764100000000 } from '../migrations/1764100000000-webhooks-initial';
import { MatchingEvents1764200000000 } from '../migrations/1764200000000-matching-events';
import { DeliveriesAttempts1764300000000 } from '../migrations/1764300000000-deliveries-attempts';
import { IdempotencyRequestHash1764400000000 } from '../migrations/1764400000000-idempotency-request-hash';
import { ResumedAt1765100000000 } from '../migrations/1765100000000-resumed-at';
import { DeliveryAttemptsByEvent1765200000000 } from '../migrations/1765200000000-delivery-attempts-by-event';
import { DeliveryAttemptsEventSlot1765300000000 } from '../migrations/1765300000000-delivery-attempts-event-slot';
import { DeliveryReplays1765400000000 } from '../migrations/1765400000000-delivery-replays';
import { PreviousSecrets1765500000000 } from '../migrations/1765500000000-previous-secrets';
import { AccountBalancePools1765600000000 } from '../migrations/1765600000000-account-balance-pools';
import { TestDeliveries1765700000000 } from '../migrations/1765700000000-test-deliveries';
import { AddressListIdempotency1765800000000 } from '../migrations/1765800000000-address-list-idempotency';
import { DeliveryLogSummary1765900000000 } from '../migrations/1765900000000-delivery-log-summary';
import { DeliveryAttemptsByTime1766000000000 } from '../migrations/1766000000000-delivery-attempts-by-time';

/** The Postgres schema this app owns; no other app reads or writes it. */
export const SCHEMA = 'webhooks';

/** Hand-written migrations, in timestamp order (matching and delivery add their own files). */
export const MIGRATIONS = [
  WebhooksInitial1764100000000,
  MatchingEvents1764200000000,
  DeliveriesAttempts1764300000000,
  IdempotencyRequestHash1764400000000,
  ResumedAt1765100000000,
  DeliveryAttemptsByEvent1765200000000,
  DeliveryAttemptsEventSlot1765300000000,
  DeliveryReplays1765400000000,
  PreviousSecrets1765500000000,
  AccountBalancePools1765600000000,
  TestDeliveries1765700000000,
  AddressListIdempotency1765800000000,
  DeliveryLogSummary1765900000000,
  DeliveryAttemptsByTime1766000000000,
];

/**
 * No TypeORM entities: repositories issue SQL (bulk unnest, FOR UPDATE, RETURNING). `pool`: the
 * app's DATABASE_POOL_SIZE and DATABASE_ACQUIRE_TIMEOUT_MS (unset: platform-db's defaults).
 */
export function dataSourceOptions(
  url: string,
  pool: { poolSize?: number; acquireTimeoutMs?: number } = {},
): AppDataSourceOptions {
  return {
    ...pool,
    url,
    schema: SCHEMA,
    entities: [],
    migrations: MIGRATIONS,
    applicationName: 'webhook-matcher',
  };
}
