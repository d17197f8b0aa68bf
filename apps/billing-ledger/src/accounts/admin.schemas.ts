import { PLAN_IDS } from '@meridian/plans';
import { z } from 'zod';

/** An account id as this service makes them (credentials/secrets.ts `newId('acc')`). */
const accountId = z.string().regex(/^acc_[0-9a-f]{24}$/, 'an account id (next_cursor)');

/** `GET /admin/accounts`: search by id prefix or name, newest first, keyset pages. */
export const adminAccountsQuery = z
  .object({
    q: z.string().trim().max(200).default(''),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: accountId.optional(),
  })
  .strict();

export const adminAccountSummary = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(['individual', 'team']),
  plan: z.enum(PLAN_IDS).nullable(),
  node_owner: z.boolean(),
  created_at: z.string(),
});

export const adminAccountsPage = z.object({
  items: z.array(adminAccountSummary),
  next_cursor: z.string().nullable().describe('pass as cursor for the next page'),
});
