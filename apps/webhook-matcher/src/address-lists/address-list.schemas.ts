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
  prefix: z
    .string()
    .regex(/^0x[0-9a-fA-F]{1,40}$/, 'the start of an address: 0x and 1 to 40 hex digits')
    .transform((p) => p.toLowerCase())
    .optional()
    .describe(
      'only the entries that start with it (hex digits in any case); pages like the whole ' +
        'list, with next_cursor (a bad one is 400 invalid_prefix)',
    ),
});

/**
 * The addresses that start with `prefix` (lower case, `0x` and 1 to 40 hex digits), as the
 * range of the list's address order they fill: every address has 40 digits, so the first is
 * the prefix padded with 0s and the last the prefix padded with fs (an index range scan).
 */
export function prefixRange(prefix: string): { first: string; last: string } {
  return { first: prefix.padEnd(42, '0'), last: prefix.padEnd(42, 'f') };
}
