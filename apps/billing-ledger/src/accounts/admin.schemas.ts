import { PLAN_IDS } from '@meridian/plans';
import { z } from 'zod';
import { listQuery } from '../http/schemas';
import { apiKeyResponse } from '../http/response.schemas';

/** An account id as this service makes them (credentials/secrets.ts `newId('acc')`). */
const accountId = z.string().regex(/^acc_[0-9a-f]{24}$/, 'an account id (next_cursor)');

/** `GET /admin/accounts`: search by id prefix or name, newest first, keyset pages. */
export const adminAccountsQuery = z
  .object({
    q: z.string().trim().max(200).default(''),
    limit: z.coerce.number().max(200, { abort: true }).int().min(1).default(50),
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

/**
 * `GET /admin/accounts/{id}/api-keys`: the account API's `GET /api-keys` pages (limit, cursor),
 * plus `state`: every key by default (an operator looking for a leaked key may need a revoked
 * one's dates too), or only the active or the revoked ones.
 */
export const adminApiKeysQuery = listQuery
  .extend({
    state: z
      .enum(['active', 'revoked', 'all'])
      .default('all')
      .describe('active: not revoked; revoked: revoked only; all (default): both'),
  })
  .strict();

/** One key as the operator sees it: the account API's view, managed and revoked_at added. */
export const adminApiKeyResponse = apiKeyResponse.extend({
  managed: z
    .boolean()
    .describe("held by the operator's side (the dashboard's own key of a user, ADR 0110)"),
  revoked_at: z.iso.datetime().nullable().describe('null while the key works'),
});

export const adminApiKeysPage = z.strictObject({
  items: z.array(adminApiKeyResponse),
  next_cursor: z.string().nullable().describe('pass as cursor for the next page'),
});
