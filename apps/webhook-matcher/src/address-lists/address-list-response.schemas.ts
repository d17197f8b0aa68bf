import { LIST_ID_PATTERN } from '@meridian/webhooks';
import { z } from 'zod';
import { count, isoTime, lowerCaseAddress, pageOf } from '../http/response-shapes';

/** The answers of the address-list routes (`addressListView` and what the routes add to it). */
const addressListFields = {
  id: z.string().regex(LIST_ID_PATTERN),
  name: z.string(),
  size: count.describe('entries in the list'),
  version: z.number().int().min(1).describe('1 when created; +1 on every real change'),
  created_at: isoTime,
  updated_at: isoTime,
};

export const addressListResponse = z.strictObject(addressListFields);

/** POST and PUT `/entries` and POST `/entries/remove`: the list after the change. */
export const entriesChangeResponse = z.strictObject({
  ...addressListFields,
  added: count.describe('addresses that were new (0 for a remove)'),
  removed: count.describe('addresses taken out (0 for an add)'),
});

export const addressListsPage = pageOf(addressListResponse);

/** GET `/entries`: addresses in address order; next_cursor is the last address of the page. */
export const entriesPage = pageOf(lowerCaseAddress);

export type AddressListResponse = z.output<typeof addressListResponse>;
