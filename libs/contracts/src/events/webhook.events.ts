import { z } from 'zod';
import { partitionOf } from '../partitions';
import { Streams } from '../streams';
import {
  accountId,
  hash32,
  hexQuantity,
  idempotencyId,
  isoTimestamp,
  networkKey,
  tokenString,
} from './common.schema';

/** The deliveries of one event, in the order a receiver gets them (delivery-worker, replays). */
export const DeliveryPhaseSchema = z.enum(['unconfirmed', 'confirmed', 'removed']);
export type DeliveryPhase = z.infer<typeof DeliveryPhaseSchema>;

export const WebhookTriggerTypeSchema = z.enum([
  'address_activity',
  'log_event',
  'tx_confirmation',
]);

export const WebhookStatusSchema = z.enum([
  'active',
  'paused',
  'paused_auto',
  'paused_plan',
  'paused_no_balance',
  'deleted',
]);
export type WebhookStatus = z.infer<typeof WebhookStatusSchema>;

/** The JSON body POSTed to the customer (COMPAT "Webhook delivery"); numbers are hex strings. */
export const WebhookEventBodySchema = z
  .object({
    webhookId: tokenString,
    eventId: tokenString,
    type: WebhookTriggerTypeSchema,
    network: networkKey,
    confirmed: z.boolean(),
    removed: z.boolean(),
    block: z.object({ number: hexQuantity, hash: hash32, timestamp: hexQuantity }),
    raw: z.record(z.string(), z.unknown()),
    decoded: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((b) => !(b.confirmed && b.removed), 'confirmed and removed are never both true');
export type WebhookEventBody = z.infer<typeof WebhookEventBodySchema>;

/**
 * `webhook.delivery.requested.v1.r<route>`: deliver one event in one phase to one webhook.
 * The job carries the event, not the target: the worker reads the webhook's target URL and
 * sealed signing secrets from the webhook-status KV bucket (WebhookStatusEntry) when it
 * attempts, so no secret is stored in clear text on the WEBHOOK stream, and a customer who
 * fixes the URL or rotates the secret is honoured by the retries already queued.
 * id = `<webhookId>:<eventId>:<phase>` (deliveryJobId) — receivers de-duplicate on eventId +
 * phase, so must we. A test delivery uses a fresh eventId per request.
 *
 * `route` is the delivery-worker partition that owns the job's destination host
 * (`deliveryRouteOf`, ADR 0432): each worker reads only its route's subject, so every endpoint's
 * limits and circuit breaker live in exactly one worker.
 */
export const DeliveryJobSchema = z.object({
  id: idempotencyId,
  webhookId: tokenString,
  accountId,
  eventId: tokenString,
  phase: DeliveryPhaseSchema,
  /** Test deliveries are free and sent only while the webhook is active. */
  test: z.boolean(),
  /** Attempt number this job starts at (1 unless re-enqueued by the worker itself). */
  attempt: z.number().int().min(1),
  payload: WebhookEventBodySchema,
  createdAt: isoTimestamp,
  /** The worker partition of the target's host; 0 with one worker. */
  route: z.number().int().min(0).max(1023).default(0),
  /**
   * The earlier phases of this event the matcher published to this webhook before this job
   * (`unconfirmed` before `confirmed`; those before `removed`): the only earlier deliveries this
   * one waits for. Absent (a job of an older matcher): every earlier phase may have been.
   */
  earlierPhases: z.array(DeliveryPhaseSchema).max(2).optional(),
});
export type DeliveryJob = z.infer<typeof DeliveryJobSchema>;

/**
 * The delivery-worker partition (of `partitions`) that owns a target URL: by its host name, so
 * the per-URL and the per-host limits both fall in one worker (ADR 0432). An unparsable URL
 * (never stored: the API refuses it) goes to partition 0.
 */
export function deliveryRouteOf(targetUrl: string, partitions: number): number {
  if (partitions <= 1) return 0;
  let host: string;
  try {
    host = new URL(targetUrl).hostname.toLowerCase();
  } catch {
    return 0;
  }
  return partitionOf(host, partitions);
}

export function deliveryJobId(webhookId: string, eventId: string, phase: DeliveryPhase): string {
  return `${webhookId}:${eventId}:${phase}`;
}

export const DeliveryErrorClassSchema = z.enum([
  'http_status',
  'timeout',
  'connection',
  'dns',
  'tls',
  'refused_address',
  'no_balance',
  'breaker_open',
  'endpoint_busy',
  'interrupted',
]);
export type DeliveryErrorClass = z.infer<typeof DeliveryErrorClassSchema>;

/**
 * Why a queued event was dropped without an attempt (its webhook is no longer active; the
 * reason follows from the status, `dropReasonOf` in @meridian/webhooks).
 */
export const DeliveryDropReasonSchema = z.enum([
  'owner_paused',
  'auto_paused',
  'no_balance',
  'plan_paused',
  'deleted',
  /** The event's 8 attempts are spent by its earlier deliveries (spec: at most 8 per event). */
  'attempts_spent',
]);
export type DeliveryDropReason = z.infer<typeof DeliveryDropReasonSchema>;

/**
 * The shortest time an attempt may stay in webhook-matcher's delivery log and in delivery-worker's
 * attempt log: a day longer than the WEBHOOK stream keeps a message. The matcher's row is what
 * makes a redelivered outcome count once (its id); the worker's is what keeps a redelivered job
 * from attempting (and billing) its number again. So a row must outlive every copy of its message.
 */
export const DELIVERY_LOG_MIN_RETENTION_MS = Streams.WEBHOOK.maxAgeMs + 24 * 3_600_000;

/**
 * `webhook.delivery.attempted.v1.<account>`: the outcome of one attempt (or of one skip while
 * the circuit breaker was open, or the drop of a queued event: outcome `dropped`, id
 * `<job id>:dropped`, attempt = the one not made). webhook-matcher derives stats and the
 * 30-minute auto-pause rule from attempts, and records drops in the attempt log only.
 * id = the attempt id (unique per attempt).
 */
export const DeliveryHealthSchema = z.object({
  id: idempotencyId,
  webhookId: tokenString,
  accountId,
  eventId: tokenString,
  phase: DeliveryPhaseSchema,
  attempt: z.number().int().min(1),
  /**
   * The slot of its event's budget the attempt took (additive, ADR 0431 amendment): 1–8, counted
   * across the event's deliveries (unconfirmed, confirmed, a removal correction; a replay is a
   * run of its own), where `attempt` counts within this delivery. Absent on a drop (not an
   * attempt) and on an attempt made before the shared budget (no slot).
   */
  eventAttempt: z.number().int().min(1).max(8).optional(),
  outcome: z.enum(['success', 'failure', 'skipped_breaker_open', 'dropped']),
  /** True when the attempt was made and billed (25 CU); false for skips and test deliveries. */
  billed: z.boolean(),
  /** The attempt was the last one (success, or failure of attempt 8: failed_terminal). */
  final: z.boolean(),
  statusCode: z.number().int().optional(),
  error: z.string().max(1024).optional(),
  durationMs: z.number().int().nonnegative().optional(),
  at: isoTimestamp,
  /**
   * Why the attempt failed or was not sent (additive, issue 15): `http_status` (an answer
   * outside 2xx, redirects included), `timeout`, `connection`, `dns`, `tls`,
   * `refused_address` (the name resolved to a private or reserved address), `no_balance`
   * (waited 10 min at zero balance; not sent, not billed), `breaker_open` (skipped),
   * `endpoint_busy` (waited 10 min for the endpoint's concurrency or host rate; not sent),
   * `interrupted` (the worker died during the attempt; counted and billed once).
   */
  errorClass: DeliveryErrorClassSchema.optional(),
  /** The first 4 KiB of the endpoint's answer (UTF-8, invalid bytes replaced). */
  responseBody: z.string().max(4096).optional(),
  /** A test delivery (free, one attempt). */
  test: z.boolean().optional(),
  /** Why the event was dropped (outcome `dropped` only; additive, issue 15). */
  dropReason: DeliveryDropReasonSchema.optional(),
  /** The event, on the final failure or drop only, so the matcher can replay it. */
  payload: WebhookEventBodySchema.optional(),
});
export type DeliveryHealth = z.infer<typeof DeliveryHealthSchema>;

/**
 * A signing secret sealed with the deployment's WEBHOOK_SECRETS_KEY (AES-256-GCM; the key ring
 * of @meridian/webhooks, `secret-box-ring.ts`, ADR 0424). `expiresAt` is null for the current secret and the end
 * of the 24 h overlap for a previous one after a rotation.
 */
export const SealedSecretSchema = z.object({
  sealed: z.string().min(1).max(512),
  expiresAt: isoTimestamp.nullable(),
});
export type SealedSecret = z.infer<typeof SealedSecretSchema>;

/**
 * Value of the webhook-status KV bucket (key: webhook id), written by webhook-matcher after
 * every committed change of the webhook. delivery-worker drops queued jobs of a webhook that is
 * not active, and those queued before its latest pause once it is active again (`reactivated`;
 * the drop reason follows from the status, see `queuedEventDropReason` in @meridian/webhooks)
 * and reads the target and secrets from here at attempt time.
 */
export const WebhookStatusEntrySchema = z.object({
  webhookId: tokenString,
  accountId,
  status: WebhookStatusSchema,
  /** Monotonic per webhook; a reader ignores an older version than the one it holds. */
  version: z.number().int().min(1),
  targetUrl: z.url({ protocol: /^https?$/ }),
  /**
   * Current secret first; then the previous secret with the latest expiry while its rotation
   * overlap lasts (two v1). Kept at most two so a worker of the first contract still parses the
   * entry and signs with these two (ADR 0423 amendment).
   */
  secrets: z.array(SealedSecretSchema).min(1).max(2),
  /**
   * The other previous secrets still in their overlap, latest expiry first (additive, absent
   * when there are none; ADR 0423 amendment): a rotation keeps every previous secret signing
   * until its own expiry. A reader signs with `secrets` and these, each while `expiresAt` is in
   * the future. The matcher holds at most 3 previous secrets; the bound leaves room for a
   * rotation served by a matcher of the first contract during a rolling update.
   */
  earlierSecrets: z
    .array(SealedSecretSchema.extend({ expiresAt: isoTimestamp }))
    .max(8)
    .optional(),
  updatedAt: isoTimestamp,
  /**
   * The last owner resume (additive; absent before the first): the owner says the endpoint is
   * fixed, so delivery-worker lets the next attempt through an open breaker as its probe.
   */
  resumedAt: isoTimestamp.optional(),
  /**
   * The webhook's latest return to `active` from a paused status (additive; absent before the
   * first): `at` (the matcher's clock, as a delivery job's `createdAt`) and the status it left.
   * An owner resume, or a plan change ending `paused_plan`. delivery-worker drops a job queued
   * before `at` even though the webhook is active again (spec: events are not sent after the
   * resume), with the drop reason of `from` (`queuedEventDropReason` in @meridian/webhooks).
   */
  reactivated: z
    .object({
      at: isoTimestamp,
      from: WebhookStatusSchema.exclude(['active', 'deleted']),
    })
    .optional(),
});
export type WebhookStatusEntry = z.infer<typeof WebhookStatusEntrySchema>;
