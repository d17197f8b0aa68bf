import {
  DELIVERY_LOG_MIN_RETENTION_MS,
  partitionCountSetting,
  partitionSetting,
} from '@meridian/contracts';
import {
  clockEnv,
  commonEnv,
  grpcTargetSetting,
  networkKeysSetting,
  refuseClockOffsetInProduction,
  secretListSetting,
  optionalTokenSetting,
  secretSetting,
} from '@meridian/platform-config';
import { parseSecretsKeyList, secretsKeySetting } from '@meridian/platform-secrets';
import { poolSettings } from '@meridian/platform-db';
import { DAY } from '@meridian/time';
import { z } from 'zod';
import { WEBHOOK_NETWORKS } from '../webhooks/networks';
import { DEFAULT_TEST_DELIVERY_LIMITS } from '../webhooks/test-delivery-limits';
import { DEFAULT_DROP_LOG_ROWS_PER_BLOCK } from '../matching/matching.repository';

const flag = z
  .enum(['true', 'false', '1', '0', ''])
  .default('false')
  .transform((v) => v === 'true' || v === '1');
const ms = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

/** Every variable webhook-matcher reads, validated at start; nothing else reads process.env. */
export const configSchema = z
  .object({
    ...commonEnv,
    ...clockEnv,
    BILLING_GRPC_URL: grpcTargetSetting.default('127.0.0.1:9090'),
    /** Postgres connections (10 by default) and their wait (platform-db `poolSettings`). */
    ...poolSettings(10),
    /**
     * The networks this deployment indexes, as chain-indexer's NETWORKS (comma-separated network
     * keys; set but empty: none): a webhook on another network would never fire, so it is
     * refused (`network_not_indexed`). Unset: every network webhooks support.
     */
    NETWORKS: networkKeysSetting(WEBHOOK_NETWORKS),
    /** billing-ledger's operator token; unset: the operator routes refuse everyone. */
    OPERATOR_TOKEN: secretSetting(z.string().min(16, 'must be at least 16 characters')).optional(),
    /** Also accepted while OPERATOR_TOKEN is rotated (deploy/README "Rotation"); unset otherwise. */
    OPERATOR_TOKEN_PREVIOUS: optionalTokenSetting(),
    /** 32 bytes, base64: seals signing secrets (same key in delivery-worker). */
    WEBHOOK_SECRETS_KEY: secretsKeySetting('must be 32 bytes, base64'),
    /**
     * Keys that sealed secrets before WEBHOOK_SECRETS_KEY (comma-separated, 32 bytes base64
     * each): they still open, never seal (ADR 0424, README "Rotating WEBHOOK_SECRETS_KEY").
     */
    WEBHOOK_SECRETS_PREVIOUS_KEYS: secretListSetting(parseSecretsKeyList).optional(),
    /** Loopback targets (http or https). Only the local stack and tests set it. */
    WEBHOOK_ALLOW_LOOPBACK_TARGETS: flag,
    /** How long a resolved API key is kept (a safety net: revocations evict it at once). */
    WEBHOOK_KEY_CACHE_TTL_MS: ms(30_000),
    /** Spec: 30 minutes of failing deliveries with at least 20 attempts → paused_auto. */
    AUTO_PAUSE_AFTER_MS: ms(30 * 60_000),
    AUTO_PAUSE_MIN_ATTEMPTS: z.coerce.number().int().min(1).default(20),
    /** Spec: 30 minutes at zero balance with events to deliver → paused_no_balance. */
    NO_BALANCE_PAUSE_AFTER_MS: ms(30 * 60_000),
    /**
     * How often active webhooks are checked for the two 30-minute decisions above, so that they
     * are taken when their time comes, not at the next attempt's outcome (0 = off).
     */
    SERVICE_DECISION_SWEEP_MS: ms(30_000),
    /**
     * Days an attempt stays in the delivery log (`GET /webhooks/{id}/deliveries`, replays of
     * given-up events); older ones are deleted. The counters (`/stats`) are kept. At least
     * `DELIVERY_LOG_MIN_RETENTION_MS` (4 days): a row de-duplicates its outcome's redeliveries.
     */
    DELIVERY_LOG_RETENTION_DAYS: z.coerce
      .number()
      .int()
      .min(Math.ceil(DELIVERY_LOG_MIN_RETENTION_MS / DAY))
      .max(3_650)
      .default(30),
    /**
     * Most `rate_limited` rows a webhook gets in the delivery log per block (ADR 0433 amendment):
     * the block's further drops are only counted (`rate_limited_total`), and its last row says how
     * many. At least 2 (one event's two phases).
     */
    DROP_LOG_ROWS_PER_BLOCK: z.coerce
      .number()
      .int()
      .min(2)
      .max(100_000)
      .default(DEFAULT_DROP_LOG_ROWS_PER_BLOCK),
    /** How often the delivery log's expired attempts are deleted (0 = off). */
    DELIVERY_LOG_PRUNE_MS: ms(10_000),
    /**
     * Hours a row of the change feed (`webhooks.change_log`) is kept; older ones are deleted. Its
     * readers need the last minute (ADR 0402 amendment); the rest is a safety window.
     */
    CHANGE_LOG_RETENTION_HOURS: z.coerce.number().int().min(1).max(8_760).default(24),
    /**
     * Test deliveries (`POST /webhooks/{id}/test`, free) a webhook may be sent in a minute, and
     * an account in an hour; over either 429 `rate_limited` (ADR 0431 amendment "Test
     * deliveries: free, and limited"). Operator policy: a self-hosting team tunes them.
     */
    TEST_DELIVERY_WEBHOOK_PER_MINUTE: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(DEFAULT_TEST_DELIVERY_LIMITS.TEST_DELIVERY_WEBHOOK_PER_MINUTE),
    TEST_DELIVERY_ACCOUNT_PER_HOUR: z.coerce
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(DEFAULT_TEST_DELIVERY_LIMITS.TEST_DELIVERY_ACCOUNT_PER_HOUR),
    /** How often status entries that did not reach the KV bucket are published again (0 = off). */
    STATUS_REPUBLISH_MS: ms(1_000),
    /** This replica's share of the accounts, `i/n` (ADR 0422); one replica: 0/1. */
    MATCHER_PARTITION: partitionSetting,
    /**
     * delivery-worker replicas (ADR 0432): each job is published on the route of its target's
     * host, which the worker of that partition reads. 1: one worker reads every job.
     */
    DELIVERY_PARTITIONS: partitionCountSetting,
  })
  .superRefine(refuseClockOffsetInProduction);

export type AppConfig = z.infer<typeof configSchema>;
