import { z } from 'zod';
import { idempotencyId, isoTimestamp } from './common.schema';

export const DeadLetterReasonSchema = z.enum(['invalid_payload', 'permanent_error', 'max_deliver']);
export type DeadLetterReason = z.infer<typeof DeadLetterReasonSchema>;

/**
 * Body published on a consumer's dead-letter subject (`<context>.message.dead-lettered.v1.<durable>`)
 * when the runner gives a message up. It carries the original body verbatim so an operator can
 * inspect it and re-publish it to `subject` once the cause is fixed.
 * id = `<durable>:<stream sequence>` (deadLetterId).
 */
export const DeadLetterSchema = z.object({
  id: idempotencyId,
  consumer: z.string(),
  stream: z.string(),
  /** Original subject, unprefixed. */
  subject: z.string(),
  streamSequence: z.number().int().nonnegative(),
  deliveryCount: z.number().int().min(1),
  reason: DeadLetterReasonSchema,
  error: z.object({ code: z.string(), message: z.string() }),
  /** The original Nats-Msg-Id, if any. */
  msgId: z.string().nullable(),
  /** The original body as UTF-8 text. */
  data: z.string(),
  deadLetteredAt: isoTimestamp,
});
export type DeadLetter = z.infer<typeof DeadLetterSchema>;

export function deadLetterId(durable: string, streamSequence: number): string {
  return `${durable}:${streamSequence}`;
}
