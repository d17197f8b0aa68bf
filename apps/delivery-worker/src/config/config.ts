import {
  DELIVERY_LOG_MIN_RETENTION_MS,
  partitionSetting,
  USAGE_PART_RETENTION_MS,
  usageFlushVersionSetting,
} from '@meridian/contracts';
import {
  clockEnv,
  commonEnv,
  refuseClockOffsetInProduction,
  secretListSetting,
} from '@meridian/platform-config';
import { DAY } from '@meridian/time';
import { parseSecretsKeyList, secretsKeySetting } from '@meridian/platform-secrets';
import { z } from 'zod';
import { DEFAULT_ACCOUNT_MAX_IN_FLIGHT } from '../protection/endpoint-limits';
import { parseDnsServers } from '../sending/dns-servers-resolver';

/** Every variable delivery-worker reads, validated at start; nothing else reads process.env. */
export const configSchema = z
  .object({
    ...commonEnv,
    ...clockEnv,
    /** Local and test deployments may deliver to loopback targets; production refuses them. */
    ALLOW_LOOPBACK_TARGETS: z
      .enum(['true', 'false'])
      .default('false')
      .transform((value) => value === 'true'),
    /** Opens the sealed signing secrets of the webhook-status KV entries (same key as the matcher). */
    WEBHOOK_SECRETS_KEY: secretsKeySetting('WEBHOOK_SECRETS_KEY must be 32 bytes, base64-encoded'),
    /**
     * Keys that sealed secrets before WEBHOOK_SECRETS_KEY (comma-separated, 32 bytes base64
     * each; the same list as webhook-matcher's): they still open (ADR 0424, README "Rotating
     * WEBHOOK_SECRETS_KEY").
     */
    WEBHOOK_SECRETS_PREVIOUS_KEYS: secretListSetting(parseSecretsKeyList).optional(),
    /** How often billed attempts leave as a usage flush (fleet usage contract). */
    USAGE_FLUSH_MS: z.coerce.number().int().min(100).max(60_000).default(1_000),
    /** Usage flush contract published: 2 (compact), or 1 during an upgrade (ADR 0105). */
    USAGE_FLUSH_VERSION: usageFlushVersionSetting,
    /**
     * DNS servers (`ip` or `ip:port`, comma-separated) that resolve target names instead of the
     * system's resolver (and /etc/hosts); unset: the system's. Every answer is still judged by
     * the send-time address rule.
     */
    DELIVERY_DNS_SERVERS: z
      .string()
      .optional()
      .transform((value, ctx) => {
        if (value === undefined) return undefined;
        try {
          return parseDnsServers(value);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
          return z.NEVER;
        }
      }),
    /** Longest put-back of a job before it is looked at again. */
    DELIVERY_RECHECK_MAX_MS: z.coerce
      .number()
      .int()
      .min(10)
      .max(30 * 60_000)
      .default(5 * 60_000),
    /**
     * Attempts one account may have in flight on this worker, across all its URLs (README
     * "Protection"): a job over it waits unbilled (`account_busy`), as one over its URL's 10.
     * Default 64, a quarter of the jobs consumer's 256 slots.
     */
    ACCOUNT_MAX_IN_FLIGHT: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(DEFAULT_ACCOUNT_MAX_IN_FLIGHT),
    /**
     * This worker's share of the delivery routes, `i/n` (ADR 0432): it reads the jobs of route i,
     * the destination hosts partition i owns. n must equal webhook-matcher's DELIVERY_PARTITIONS.
     */
    DELIVERY_PARTITION: partitionSetting,
    /**
     * Days an attempt stays in the attempt log; older ones are deleted once billed. At least
     * `DELIVERY_LOG_MIN_RETENTION_MS` (4 days: the row keeps a redelivered job from attempting
     * its number again); by default as long as the part that billed it is kept (8 days). The
     * history customers read is webhook-matcher's delivery log, kept on its own.
     */
    ATTEMPT_LOG_RETENTION_DAYS: z.coerce
      .number()
      .int()
      .min(Math.ceil(DELIVERY_LOG_MIN_RETENTION_MS / DAY), {
        message: `at least ${Math.ceil(DELIVERY_LOG_MIN_RETENTION_MS / DAY)} days: the WEBHOOK stream may deliver a job again until then`,
      })
      .max(3_650)
      .default(Math.ceil(USAGE_PART_RETENTION_MS / DAY)),
    /** How often the attempt log's expired attempts are deleted (0 = off). */
    ATTEMPT_LOG_PRUNE_MS: z.coerce.number().int().min(0).default(10_000),
  })
  .superRefine(refuseClockOffsetInProduction);

export type AppConfig = z.infer<typeof configSchema>;
