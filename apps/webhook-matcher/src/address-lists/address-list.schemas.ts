import { z } from 'zod';
import { pageLimit } from '../webhooks/webhook.schemas';

/** One request carries at most this many addresses (a full list; the body cap is about 5 MiB). */
export const MAX_ADDRESSES_PER_REQUEST = 100_000;

const addresses = z.array(z.string().max(100)).max(MAX_ADDRESSES_PER_REQUEST);

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
