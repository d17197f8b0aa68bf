import { EVM_ADDRESS_PATTERN } from '@meridian/networks';
import {
  CONFIRM_DEPTH_MAX,
  CONFIRM_DEPTH_MIN,
  LIST_ID_PATTERN,
  MAX_FILTER_DEPTH,
  MAX_FILTER_NODES,
  PHASES,
  TRIGGER_TYPES,
  TX_HASH_PATTERN,
} from '@meridian/webhooks';
import { z } from 'zod';
import { schemaResource } from '../http/response-shapes';
import { WEBHOOK_CHAINS, WEBHOOK_NETWORKS } from './networks';

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

/*
 * What `/openapi.json` declares for the create and PATCH bodies. The routes validate with the
 * schemas above, whose `filters`, `addresses`, `list_refs` and `network` stay loose so that
 * normalizeFilter and chainAndNetwork answer their own codes (invalid_address_checksum with its
 * `expected`, unsupported_network, …) instead of malformed_body. These describe what those
 * checks accept, no less: openapi.spec.ts validates every body the route accepts in its corpus
 * against them with ajv.
 */
const inputAddress = z
  .string()
  .regex(EVM_ADDRESS_PATTERN)
  .describe(
    'an EVM address: all lower case, all upper case or with a right EIP-55 checksum; returned ' +
      'lower case',
  );
const inputListId = z.string().regex(LIST_ID_PATTERN).describe('an address list id');
const hex32 = z.string().regex(TX_HASH_PATTERN).describe('32-byte hex, any case');

/** A filter node as a request gives it: exactly one key (as `normalizeFilter` reads it). */
type FilterNodeInput =
  | { all: FilterNodeInput[] }
  | { any: FilterNodeInput[] }
  | { not: FilterNodeInput }
  | { address: { dir?: 'in' | 'out' | 'any'; in?: string[]; list_refs?: string[] } }
  | { contract: { in: string[] } }
  | { topic: { position: number; in: string[] } }
  | { tx_hash: { in: string[] } };

const filterNodeInput: z.ZodType<FilterNodeInput> = z.lazy(() =>
  z.union([
    z.strictObject({ all: z.array(filterNodeInput).min(1).max(MAX_FILTER_NODES) }),
    z.strictObject({ any: z.array(filterNodeInput).min(1).max(MAX_FILTER_NODES) }),
    z.strictObject({ not: filterNodeInput }),
    z.strictObject({
      address: z
        .strictObject({
          dir: z.enum(['in', 'out', 'any']).optional().describe('any when not given'),
          in: z.array(inputAddress).optional(),
          list_refs: z.array(inputListId).optional(),
        })
        .describe('needs `in` or `list_refs` (a non-empty one)'),
    }),
    z.strictObject({ contract: z.strictObject({ in: z.array(inputAddress).min(1) }) }),
    z.strictObject({
      topic: z.strictObject({
        position: z.number().int().min(0).max(3),
        in: z.array(hex32).min(1).max(1_000),
      }),
    }),
    z.strictObject({ tx_hash: z.strictObject({ in: z.array(hex32).min(1) }) }),
  ]),
);

const filterTreeInput = filterNodeInput
  .nullable()
  .describe(
    `the filter tree: all / any / not nodes over address, contract, topic and tx_hash leaves, ` +
      `at most ${MAX_FILTER_DEPTH} levels and ${MAX_FILTER_NODES} nodes (${ADDRESSES_RULE}); ` +
      'null or absent: the shorthand alone (on PATCH, null removes the tree)',
  );
const shorthandInput = {
  filters: filterTreeInput.optional(),
  addresses: z
    .array(inputAddress)
    .nullable()
    .optional()
    .describe(`shorthand address leaf (dir any): ${ADDRESSES_RULE}`),
  list_refs: z
    .array(inputListId)
    .nullable()
    .optional()
    .describe('shorthand: address lists watched (dir any), each once'),
};
const networkInput = z
  .enum(WEBHOOK_NETWORKS)
  .describe('one the deployment indexes, else 400 network_not_indexed');

/** The create body as `/openapi.json` declares it (`createWebhookBody` validates). */
export const createWebhookDocument = schemaResource(
  'create-webhook-request',
  createWebhookBody.extend({
    ...shorthandInput,
    chain: z.enum(WEBHOOK_CHAINS).optional().describe("the network's chain; derived when absent"),
    network: networkInput,
  }),
);

/** The PATCH body as `/openapi.json` declares it (`patchWebhookBody` validates). */
export const patchWebhookDocument = schemaResource(
  'patch-webhook-request',
  patchWebhookBody.extend({
    ...shorthandInput,
    chain: z.enum(WEBHOOK_CHAINS).optional().describe('only the webhook’s own'),
    network: networkInput.optional().describe('only the webhook’s own'),
    trigger_type: z.enum(TRIGGER_TYPES).optional().describe('only the webhook’s own'),
  }),
);

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
