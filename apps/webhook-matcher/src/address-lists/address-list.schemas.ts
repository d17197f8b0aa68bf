import { z } from 'zod';
import { pageLimit } from '../webhooks/webhook.schemas';

/**
 * No count here: the plan's addresses-per-list cap is a 409 cap_addresses_per_list_exceeded on
 * every route (spec limits rule 6), counted after duplicates collapse; the body's 5 MiB (413)
 * bounds the array.
 */
const addresses = z
  .array(z.string().max(100))
  .describe(
    'EVM addresses: 0x and 40 hex digits, all lower case, all upper case or with a right EIP-55 ' +
      'checksum (mixed case with a wrong one is 400 invalid_address_checksum, a malformed one ' +
      '400 invalid_address; the 400 names the first with `path` and lists every refused entry ' +
      'in `refused`); stored and returned lower case (ADR 0403)',
  );

export const createListBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  addresses: addresses.optional(),
});

export const patchListBody = z.strictObject({ name: z.string().trim().min(1).max(200) });

export const entriesBody = z.strictObject({ addresses });

export const entriesQuery = z.strictObject({
  limit: pageLimit,
  cursor: z
    .string()
    .regex(/^0x[0-9a-f]{40}$/, 'use next_cursor of the previous page')
    .optional(),
});
