import { partitionSetting, USAGE_PART_RETENTION_MS, USAGE_PARTITIONS } from '@meridian/contracts';
import { commonEnv, optionalTokenSetting, port, secretSetting } from '@meridian/platform-config';
import { poolSettings } from '@meridian/platform-db';
import { DAY } from '@meridian/time';
import { z } from 'zod';

/** Every variable billing-ledger reads, validated at start; nothing else reads process.env. */
export const configSchema = z.object({
  ...commonEnv,
  GRPC_PORT: port.default(9090),
  /** Postgres connections (20 by default: requests, usage and jobs share them) and their wait. */
  ...poolSettings(20),
  /** Guards the operator (admin) API. */
  OPERATOR_TOKEN: secretSetting(z.string().min(16, 'must be at least 16 characters')),
  /** Also accepted while OPERATOR_TOKEN is rotated (deploy/README "Rotation"); unset otherwise. */
  OPERATOR_TOKEN_PREVIOUS: optionalTokenSetting(),
  /** How long a top-up stays pending before it clears (spec: one to two minutes). */
  TOPUP_CLEARING_MS: z.coerce.number().int().min(0).default(90_000),
  /**
   * Whether an account buys its own top-ups (`POST /top-ups`) and changes its own plan
   * (`PUT /account/plan`). `false` (the default): only the operator does, through the operator
   * API, which is where a deployment's payment integration credits what its users paid; the two
   * account routes answer 403 `self_service_disabled`. `true`: recorded as bought (payment is
   * outside this service), as the local stack's demo does.
   */
  SELF_SERVICE_BILLING: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /**
   * How often top-up clearing, allowance resets and re-publishing run, and how often the usage
   * journals' retention looks whether its hour came (0 = never; tests tick by hand).
   */
  LEDGER_TICK_MS: z.coerce.number().int().min(0).default(1_000),
  /**
   * Balance states of usage go out at most once per this interval (the first change after a
   * quiet interval at once), so successive changes of an account go out once, as its latest
   * version (the rule: in KV within 5 s of a change; a flip at once). 250 ms: at a fleet's shape
   * a usage commit comes every ~0.7 s, so a longer interval coalesces little and only adds lag
   * (1 s: lag p99 2.3 s in the ledger bench; 250 ms: 1.9 s, same CPU per item; ADR 0104).
   */
  STATE_PUBLISH_DELAY_MS: z.coerce.number().int().min(0).max(2_000).default(250),
  /**
   * How often hourly usage recorded by usage transactions is folded into the hourly rollups
   * (0 = only when usage is read; a read always folds first, so the usage API is exact). ADR 0104.
   */
  USAGE_FOLD_MS: z.coerce.number().int().min(0).default(30_000),
  /**
   * Balance rows kept in memory by version, so a transaction that locks an account this process
   * committed last takes its row without reading it (ADR 0106); least recently used first out.
   * ~0.5 KB an account: 200,000 fit in the pod's 1 GiB beside the rest. 0 = off.
   */
  BALANCE_CACHE_ACCOUNTS: z.coerce.number().int().min(0).default(200_000),
  /**
   * Days of usage journals kept with their entries (ADR 0104 "Storage"); older days are summed
   * per account and ledger into `usage_summaries` and their partitions dropped. 0 = kept
   * forever. At least the days the BILLING stream may deliver a usage event again
   * (`USAGE_PART_RETENTION_MS`): a per-account event's journal key is what makes it count once.
   */
  USAGE_JOURNAL_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(0)
    .default(35)
    .refine((days) => days === 0 || days * DAY >= USAGE_PART_RETENTION_MS, {
      message: `0 (kept forever) or at least ${Math.ceil(USAGE_PART_RETENTION_MS / DAY)} days: the BILLING stream may deliver a usage event again until then`,
    }),
  /**
   * Days a published outbox event is kept (a record of what went out; only unpublished ones are
   * read, to be relayed, and those are kept whatever their age); older ones are deleted.
   */
  OUTBOX_RETENTION_DAYS: z.coerce.number().int().min(1).max(3_650).default(7),
  /**
   * `i/n`: this is replica i of n billing-ledger replicas (the pod's ordinal and the
   * StatefulSet's replicas), and applies the usage of the usage partitions k with k mod n = i
   * (ADR 0107), read through their durables; replica 0 also reads per-account events and v1
   * parts. At most 8 replicas (the usage partitions). Nothing else in the fleet depends on n: a
   * change is a rolling update of billing-ledger. Default `0/1`: one replica reads everything
   * (several replicas at `0/1` share every durable).
   */
  LEDGER_PARTITION: partitionSetting.refine((p) => p.count <= USAGE_PARTITIONS, {
    message: `at most ${USAGE_PARTITIONS} replicas: one per usage partition`,
  }),
  /**
   * With partitions: how long a partition's replica may not answer before the other replicas
   * stand in for it and read its durables, until it answers again (ADR 0105 step 3). It is asked
   * three times in this interval. 0 = never stand in.
   */
  LEDGER_TAKEOVER_MS: z.coerce.number().int().min(0).default(10_000),
  /**
   * Tests only: the clock becomes adjustable through the operator route
   * POST /api/v1/admin/clock/advance (absent unless exactly `true`; nothing else sets it).
   */
  TEST_CLOCK_CONTROL: z
    .enum(['true', 'false', ''])
    .default('false')
    .transform((v) => v === 'true'),
});

export type AppConfig = z.infer<typeof configSchema>;
