import {
  CONFIRM_DEPTH_MAX,
  CONFIRM_DEPTH_MIN,
  LIST_ID_PATTERN,
  MAX_PREVIOUS_SECRETS,
  PHASES,
  STATUS_LABELS,
  TRIGGER_TYPES,
  WEBHOOK_STATUSES,
  statusLabel,
  type FilterNode,
  type WebhookStatus,
} from '@meridian/webhooks';
import { z } from 'zod';
import { count, isoTime, lowerCaseAddress, pageOf, schemaResource } from '../http/response-shapes';
import { WEBHOOK_CHAINS, WEBHOOK_NETWORKS } from './networks';

/** The answers of the webhook routes (`webhookView` and what the routes add to it). */

const listId = z.string().regex(LIST_ID_PATTERN);
const hash32 = z
  .string()
  .regex(/^0x[0-9a-f]{64}$/)
  .describe('32-byte hex, lower case');

/**
 * A filter node as stored and answered: normalised by `normalizeFilter` (addresses, topics and
 * hashes lower case; an address leaf always has `dir`, `in` and `list_refs`). At most 8 levels
 * and 256 nodes (the request side refuses more).
 */
export const filterNode: z.ZodType<FilterNode> = z.lazy(() =>
  z.union([
    z.strictObject({ all: z.array(filterNode).min(1) }),
    z.strictObject({ any: z.array(filterNode).min(1) }),
    z.strictObject({ not: filterNode }),
    z.strictObject({
      address: z.strictObject({
        dir: z.enum(['in', 'out', 'any']),
        in: z.array(lowerCaseAddress),
        list_refs: z.array(listId),
      }),
    }),
    z.strictObject({ contract: z.strictObject({ in: z.array(lowerCaseAddress).min(1) }) }),
    z.strictObject({
      topic: z.strictObject({ position: z.literal([0, 1, 2, 3]), in: z.array(hash32).min(1) }),
    }),
    z.strictObject({ tx_hash: z.strictObject({ in: z.array(hash32).min(1) }) }),
  ]),
);

const labels = Object.values(STATUS_LABELS).filter((label): label is string => label !== null);

const webhookFields = {
  id: z.string().regex(/^wh_[a-z2-7]{24}$/),
  name: z.string().nullable(),
  status: z.enum(WEBHOOK_STATUSES),
  status_label: z
    .enum(labels)
    .nullable()
    .describe('the dashboard label of the status (STATUS_LABELS); null for deleted'),
  chain: z.enum(WEBHOOK_CHAINS),
  network: z.enum(WEBHOOK_NETWORKS),
  trigger_type: z.enum(TRIGGER_TYPES),
  filters: filterNode
    .nullable()
    .describe('the tree as given, normalised; null when only addresses / list_refs were given'),
  addresses: z.array(lowerCaseAddress).describe('the top-level shorthand'),
  list_refs: z.array(listId).describe('the top-level shorthand'),
  confirm_depth: z.number().int().min(CONFIRM_DEPTH_MIN).max(CONFIRM_DEPTH_MAX),
  phases: z.array(z.enum(PHASES)).min(1),
  target_url: z.string(),
  version: z.number().int().min(1).describe('+1 on every change'),
  created_at: isoTime,
  updated_at: isoTime,
  previous_secrets_expire_at: z
    .array(isoTime)
    .describe(
      'until when each previous secret still signs beside the current one, the latest first ' +
        `(at most ${MAX_PREVIOUS_SECRETS}; empty when only the current secret signs)`,
    ),
  stats: z
    .strictObject({
      failed_total: z
        .number()
        .int()
        .min(0)
        .describe('failed attempts, attempts skipped while the circuit breaker is open included'),
      rate_limited_total: z
        .number()
        .int()
        .min(0)
        .describe('events dropped above the events-per-second limit'),
    })
    .describe("the spec's record members; GET /webhooks/{id}/stats has these and more"),
  usage: z
    .strictObject({
      addresses: count.describe(
        'what caps.addresses_per_webhook counts: its own addresses plus every referenced ' +
          "list's entries, without de-duplication",
      ),
      inline_addresses: count.describe(
        'what caps.inline_addresses counts: addresses and contracts named in the filter and ' +
          'the shorthand',
      ),
      list_refs: count.describe(
        'what caps.list_refs counts: every list reference (a list in two leaves counts twice)',
      ),
    })
    .describe(
      'what this webhook holds against the per-webhook caps of GET /webhooks/limits, counted ' +
        'as a create, a PATCH or a resume checks them: one refused on such a cap names this ' +
        'count (or what the write would make it)',
    ),
};

/** Not in the JSON Schema (a refinement): the label is the one of the status. */
const labelOfStatus = (w: { status: WebhookStatus; status_label: string | null }) =>
  w.status_label === statusLabel(w.status);
const notItsLabel = { message: 'status_label is not the label of status', path: ['status_label'] };

const secret = z
  .string()
  .regex(/^whsec_[A-Za-z0-9+/]{43}=$/)
  .describe('the signing secret (whsec_ + base64 of 32 bytes), shown only in this answer');

const webhook = z.strictObject(webhookFields).refine(labelOfStatus, notItsLabel);

export const webhookResponse = schemaResource('webhook', webhook);

/** POST /webhooks (and its Idempotency-Key replay): the webhook and the secret that signs now. */
export const createdWebhookResponse = schemaResource(
  'created-webhook',
  z.strictObject({ ...webhookFields, secret }).refine(labelOfStatus, notItsLabel),
);

export const rotatedWebhookResponse = schemaResource(
  'rotated-webhook',
  z
    .strictObject({
      ...webhookFields,
      secret,
      previous_secret_expires_at: isoTime
        .nullable()
        .describe(
          'until when the secret just replaced also signs (the first of ' +
            'previous_secrets_expire_at); null with expire_previous',
        ),
    })
    .refine(labelOfStatus, notItsLabel),
);

export const webhooksPage = schemaResource('webhooks-page', pageOf(webhook));

export const testDeliveryResponse = z.strictObject({
  queued: z.literal(true),
  event_id: z
    .string()
    .regex(/^test_[0-9a-f]{24}$/)
    .describe('the test delivery’s event id'),
});

export type WebhookResponse = z.output<typeof webhookResponse>;

/** A record's `usage` (`RecordUsage` counts it); the dashboard's page reads this type. */
export type WebhookUsage = WebhookResponse['usage'];
