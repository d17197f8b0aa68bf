import {
  DeliveryDropReasonSchema,
  DeliveryErrorClassSchema,
  DeliveryHealthSchema,
  DeliveryPhaseSchema,
} from '@meridian/contracts';
import { MAX_DELIVERY_ATTEMPTS } from '@meridian/webhooks';
import { z } from 'zod';
import { EVENT_ID } from '../http/ids';
import { count, isoTime, pageOf } from '../http/response-shapes';

/** The log's outcomes: delivery-worker's, and `rate_limited` (dropped by the events budget). */
export const ATTEMPT_OUTCOMES = [
  ...DeliveryHealthSchema.shape.outcome.options,
  'rate_limited',
] as const;
export const attemptOutcome = z.enum(ATTEMPT_OUTCOMES);

const blockNumber = z.union([
  z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  z.string().regex(/^0x[0-9a-fA-F]{1,16}$/, 'a block number (integer or hex)'),
]);

/** A block number in a query: decimal or 0x hex, as the replay's range takes it. */
const queryBlockNumber = z
  .string()
  .regex(/^(\d{1,16}|0x[0-9a-fA-F]{1,16})$/, 'a block number (decimal or 0x hex)')
  .transform((v) => BigInt(v));

/**
 * `GET /webhooks/{id}/deliveries` (README "Delivery log, stats and replay"). Without a filter
 * the failed attempts (every outcome but success, COMPAT); a filter naming an event (`event_id`,
 * `tx_hash`, `block_number`) lists every outcome, successes included (Svix's attempts of a
 * message), unless `outcome` says which; `since`/`until` bound the time. All ANDed.
 */
export const deliveriesQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z
    .string()
    .regex(/^\d{1,19}$/, 'use next_cursor of the previous page')
    .optional(),
  event_id: z
    .string()
    .regex(EVENT_ID, 'an event id: ev_ + 32 hex, or test_ + 24 hex for a test delivery')
    .optional()
    .describe(
      "one event's attempts of every outcome, successes included (none yet: an empty page)",
    ),
  tx_hash: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'a transaction hash: 0x + 64 hex')
    .transform((v) => v.toLowerCase())
    .optional()
    .describe('the rows of the events of this transaction, every outcome unless `outcome`'),
  block_number: queryBlockNumber
    .optional()
    .describe(
      'the rows of the events of this block (decimal or 0x hex), every outcome unless `outcome`',
    ),
  outcome: z
    .string()
    .transform((v, ctx) => {
      const names = [...new Set(v.split(','))];
      for (const name of names)
        if (!attemptOutcome.safeParse(name).success) {
          ctx.addIssue({
            code: 'custom',
            message: `an outcome: one or more of ${ATTEMPT_OUTCOMES.join(', ')}, comma-separated`,
          });
          return z.NEVER;
        }
      return names as (typeof ATTEMPT_OUTCOMES)[number][];
    })
    .optional()
    .describe(
      `only these outcomes, comma-separated (${ATTEMPT_OUTCOMES.join(', ')}); success lists deliveries`,
    ),
  since: z.iso
    .datetime({ offset: true })
    .transform((v) => new Date(v))
    .optional()
    .describe('rows at or after this ISO-8601 time (with its offset, Z for UTC)'),
  until: z.iso
    .datetime({ offset: true })
    .transform((v) => new Date(v))
    .optional()
    .describe('rows at or before this ISO-8601 time; not before since'),
});

/** `{from, to}`: both ISO times, or both block numbers; from ≤ to. */
export const replayRangeBody = z
  .strictObject({
    from: z.union([z.iso.datetime({ offset: true }), blockNumber]),
    to: z.union([z.iso.datetime({ offset: true }), blockNumber]),
  })
  .transform((b, ctx) => {
    const isTime = (v: unknown) => typeof v === 'string' && !v.startsWith('0x');
    if (isTime(b.from) !== isTime(b.to)) {
      ctx.addIssue({ code: 'custom', message: 'from and to are both times or both block numbers' });
      return z.NEVER;
    }
    if (isTime(b.from)) {
      const fromAt = new Date(b.from as string);
      const toAt = new Date(b.to as string);
      if (fromAt > toAt) {
        ctx.addIssue({ code: 'custom', message: 'from is after to' });
        return z.NEVER;
      }
      return { fromAt, toAt };
    }
    const fromBlock = BigInt(b.from);
    const toBlock = BigInt(b.to);
    if (fromBlock > toBlock) {
      ctx.addIssue({ code: 'custom', message: 'from is above to' });
      return z.NEVER;
    }
    return { fromBlock, toBlock };
  });

/**
 * One attempt as `GET /webhooks/{id}/deliveries` answers it (a failed one, or with `event_id`
 * any). The view is typed by it and
 * the dashboard's page imports its type, so the answer, the OpenAPI document and the page that
 * reads it cannot drift apart. Strict, like every response schema (ADR 0602): the integration
 * tests parse real answers with it.
 */
export const deliveryAttempt = z.strictObject({
  event_id: z.string().describe('ev_ + 32 hex; test_ + 24 hex for a test delivery'),
  phase: DeliveryPhaseSchema,
  attempt: z
    .number()
    .int()
    .min(1)
    .describe("the attempt's number within this delivery (this event and phase)"),
  event_attempt: z
    .number()
    .int()
    .min(1)
    .max(MAX_DELIVERY_ATTEMPTS)
    .nullable()
    .describe(
      `which of the event's ${MAX_DELIVERY_ATTEMPTS} attempts this was, counted across its deliveries (unconfirmed, confirmed, removed; a replay counts from 1 again); null for a drop and for attempts made before this was recorded`,
    ),
  event_attempts_left: z
    .number()
    .int()
    .min(0)
    .max(MAX_DELIVERY_ATTEMPTS - 1)
    .nullable()
    .describe(
      `the event's attempts left after this one (${MAX_DELIVERY_ATTEMPTS} − event_attempt; 0 for a test delivery, attempted once, and for a drop as attempts_spent); null when event_attempt is`,
    ),
  at: isoTime.describe('when the attempt was made'),
  // The log lists what did not succeed; one event's attempts (`?event_id=`) include successes.
  outcome: attemptOutcome.describe(
    'failure, skipped_breaker_open, dropped (a queued event not sent), rate_limited (dropped by ' +
      "the account's events per second: never queued, not billed, attempt 1 not made); success " +
      'only with a filter naming an event or ?outcome=',
  ),
  final: z.boolean().describe('no retry follows (given up)'),
  test: z.boolean(),
  billed: z.boolean(),
  status_code: z.number().int().nullable(),
  duration_ms: z.number().int().min(0).nullable(),
  error_class: z
    .enum([
      ...new Set([
        ...DeliveryErrorClassSchema.options,
        ...DeliveryDropReasonSchema.options,
        'rate_limited' as const,
      ]),
    ])
    .nullable()
    .describe(
      'why the attempt failed (http_status, timeout, connection, dns, tls, …); for a drop its reason (auto_paused, no_balance, …, rate_limited)',
    ),
  error: z.string().nullable(),
  response_body: z.string().nullable().describe("the first 4 KiB of the endpoint's answer"),
  network: z.string().nullable().describe("the event's network; null for a test delivery"),
  block_number: z
    .number()
    .int()
    .nullable()
    .describe("the event's block; null for a test delivery and rows recorded before"),
  tx_hash: z
    .string()
    .nullable()
    .describe('the transaction of the event (a transaction, or the one that emitted the log)'),
  addresses: z
    .array(z.string())
    .describe(
      "the event's addresses a filter matches on: a transaction's from and to, a log's contract " +
        "and a token transfer's from and to (lower case); empty when the row has no summary",
    ),
});

export const deliveriesPage = pageOf(deliveryAttempt);

export const deliveryStats = z.strictObject({
  delivered_total: count,
  failed_total: count,
  rate_limited_total: count.describe('events dropped by the events-per-second budget'),
  last_delivered_at: isoTime.nullable(),
});

/** Both replay routes (202): the events sent out again as new delivery jobs. */
export const replayResponse = z.strictObject({
  replayed: count.describe('delivery jobs published (one per given-up event and phase)'),
  event_ids: z.array(z.string()).describe('the distinct events replayed'),
});

export type DeliveryAttempt = z.output<typeof deliveryAttempt>;
export type DeliveryStats = z.output<typeof deliveryStats>;
export type ReplayResponse = z.output<typeof replayResponse>;
