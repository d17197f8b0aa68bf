import { z } from 'zod';

export const deliveriesQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z
    .string()
    .regex(/^\d{1,19}$/, 'use next_cursor of the previous page')
    .optional(),
});

const blockNumber = z.union([
  z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  z.string().regex(/^0x[0-9a-fA-F]{1,16}$/, 'a block number (integer or hex)'),
]);

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
 * One failed attempt as `GET /webhooks/{id}/deliveries` answers it. The view is typed by it and
 * the dashboard's page imports its type, so the answer, the OpenAPI document and the page that
 * reads it cannot drift apart.
 */
export const deliveryAttempt = z.object({
  event_id: z.string(),
  phase: z.string(),
  attempt: z.number().int(),
  at: z.string().describe('when the attempt was made (ISO time)'),
  outcome: z
    .string()
    .describe('success, failure, skipped_breaker_open, or dropped (a queued event not sent)'),
  final: z.boolean().describe('no retry follows (given up)'),
  test: z.boolean(),
  billed: z.boolean(),
  status_code: z.number().int().nullable(),
  duration_ms: z.number().int().nullable(),
  error_class: z
    .string()
    .nullable()
    .describe(
      'dns, tls, timeout, connection, …; for a drop its reason (auto_paused, no_balance, …)',
    ),
  error: z.string().nullable(),
  response_body: z.string().nullable(),
});

export const deliveriesPage = z.object({
  items: z.array(deliveryAttempt),
  next_cursor: z.string().nullable(),
});

export const deliveryStats = z.object({
  delivered_total: z.number().int(),
  failed_total: z.number().int(),
  rate_limited_total: z.number().int(),
  last_delivered_at: z.string().nullable(),
});

export type DeliveryAttempt = z.output<typeof deliveryAttempt>;
export type DeliveryStats = z.output<typeof deliveryStats>;
