import { CONFIRM_DEPTH_MAX, CONFIRM_DEPTH_MIN, PHASES, TRIGGER_TYPES } from '@meridian/webhooks';
import { z } from 'zod';

const name = z.string().trim().min(1).max(200);
const phases = z
  .array(z.enum(PHASES))
  .min(1)
  .max(2)
  .refine((p) => new Set(p).size === p.length, 'phases are listed once each');

/** How the API reads every address of a filter, its shorthand included (ADR 0403). */
const ADDRESSES_RULE =
  'EVM addresses (0x and 40 hex digits): all lower case, all upper case or with a right EIP-55 ' +
  'checksum; mixed case with a wrong one is 400 invalid_address_checksum naming the address ' +
  'checksummed (`expected`), a malformed one 400 invalid_address, each with its `path`; ' +
  'stored and returned lower case';
const filtersField = z
  .unknown()
  .describe(`the filter tree (address and contract leaves hold ${ADDRESSES_RULE})`);
const addressesField = z.unknown().describe(`shorthand address leaf (dir any): ${ADDRESSES_RULE}`);

/** Strict: an unknown field is 400 malformed_body. Filters are checked by normalizeFilter. */
export const createWebhookBody = z.strictObject({
  name: name.nullable().optional(),
  chain: z.string().max(64).optional(),
  network: z.string().max(64),
  trigger_type: z.enum(TRIGGER_TYPES),
  filters: filtersField.optional(),
  addresses: addressesField.optional(),
  list_refs: z.unknown().optional(),
  confirm_depth: z.number().int().min(CONFIRM_DEPTH_MIN).max(CONFIRM_DEPTH_MAX).optional(),
  phases: phases.optional(),
  target_url: z.string().max(4096),
});
export type CreateWebhookBody = z.output<typeof createWebhookBody>;

/** chain, network and trigger_type may be repeated unchanged, never changed. */
export const patchWebhookBody = z.strictObject({
  name: name.nullable().optional(),
  chain: z.string().max(64).optional(),
  network: z.string().max(64).optional(),
  trigger_type: z.string().max(64).optional(),
  filters: filtersField.optional(),
  addresses: addressesField.optional(),
  list_refs: z.unknown().optional(),
  confirm_depth: z.number().int().min(CONFIRM_DEPTH_MIN).max(CONFIRM_DEPTH_MAX).optional(),
  phases: phases.optional(),
  target_url: z.string().max(4096).optional(),
});
export type PatchWebhookBody = z.output<typeof patchWebhookBody>;

export const rotateSecretBody = z.strictObject({ expire_previous: z.boolean().default(false) });

export const emptyBody = z.strictObject({});

/** COMPAT: every list route pages with `limit` default 50, max 200 (entries of a list too). */
export const pageLimit = z.coerce.number().int().min(1).max(200).default(50);

export const pageQuery = z.strictObject({
  limit: pageLimit,
  cursor: z
    .string()
    .regex(/^\d{1,19}$/, 'use next_cursor of the previous page')
    .optional(),
});
