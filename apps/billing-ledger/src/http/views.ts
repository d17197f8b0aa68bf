import type { AccessTokenRow, ApiKeyRow } from '../credentials/credentials.repository';
import { purchasedAndOverdraft } from '../ledger/ledger-math';
import type { BalanceRow } from '../ledger/ledger.repository';
import type { TopUpRow } from '../ledger/top-ups.repository';
import { balanceStateOf, capsOf } from '../state/account-state';

/** JSON shapes of the REST API (snake_case, like the other REST APIs of the service). */
export function balanceView(row: BalanceRow, pending: TopUpRow[], now: Date) {
  const state = balanceStateOf(row, now);
  const { purchased, overdraft } = purchasedAndOverdraft(row.purchased);
  return {
    state: state.state,
    exhausted_since: state.exhaustedSince,
    allowance_cu: row.allowance,
    allowance_total_cu: row.allowanceTotal,
    allowance_resets_at: row.periodEnd?.toISOString() ?? null,
    purchased_cu: purchased,
    overdraft_cu: overdraft,
    pending_top_up_cu: row.pending,
    pending_top_ups: pending.map((t) => ({
      id: t.id,
      cu: t.cu,
      clears_at: t.clearsAt.toISOString(),
    })),
    total_cu: row.allowance + purchased,
    version: row.version,
  };
}

/** `selfServiceBilling`: whether this deployment lets the account top up and change its plan. */
export function accountView(
  row: BalanceRow,
  pending: TopUpRow[],
  now: Date,
  selfServiceBilling: boolean,
) {
  const caps = capsOf(row);
  return {
    id: row.accountId,
    name: row.name,
    type: row.accountType,
    plan: row.planId,
    plan_required: row.planId === null && !row.nodeOwner,
    node_owner: row.nodeOwner,
    self_service_billing: selfServiceBilling,
    plan_started_at: row.planStartedAt.toISOString(),
    created_at: row.createdAt.toISOString(),
    caps: {
      node_rps: caps.nodeRps,
      access_tokens: caps.accessTokens,
      allowance_cu: row.allowanceTotal,
      webhooks: {
        active_webhooks: caps.webhooks.activeWebhooks,
        addresses_per_webhook: caps.webhooks.addressesPerWebhook,
        addresses_per_account: caps.webhooks.addressesPerAccount,
        events_per_second: caps.webhooks.eventsPerSecond,
        events_burst: caps.webhooks.eventsBurst,
        inline_addresses: caps.webhooks.inlineAddresses,
        list_refs: caps.webhooks.listRefs,
        address_lists: caps.webhooks.addressLists,
        addresses_per_list: caps.webhooks.addressesPerList,
      },
      audit: {
        checks_per_day: caps.audit.checksPerPeriod,
        requests_per_second: caps.audit.requestsPerSecond,
      },
    },
    balance: balanceView(row, pending, now),
  };
}

export function apiKeyView(row: ApiKeyRow, secret?: string) {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    hint: row.keyHint,
    created_at: row.createdAt.toISOString(),
    created_by: row.createdBy,
    ...(secret ? { key: secret } : {}),
  };
}

/**
 * A key as the operator lists it (`GET /admin/accounts/{id}/api-keys`): the account API's view,
 * plus whether the operator's side holds it and when it was revoked. Never the secret nor its
 * hash.
 */
export function adminApiKeyView(row: ApiKeyRow) {
  return {
    ...apiKeyView(row),
    managed: row.managed,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

export function accessTokenView(row: AccessTokenRow, secret?: string) {
  return {
    id: row.id,
    network: row.network,
    name: row.name,
    hint: row.tokenHint,
    created_at: row.createdAt.toISOString(),
    ...(secret ? { token: secret } : {}),
  };
}

export function topUpView(row: TopUpRow) {
  return {
    id: row.id,
    cu: row.cu,
    source: row.source,
    status: row.status,
    created_at: row.createdAt.toISOString(),
    clears_at: row.clearsAt.toISOString(),
    cleared_at: row.clearedAt?.toISOString() ?? null,
    api_key_id: row.apiKeyId,
    created_by: row.createdBy,
  };
}

/** `{items, next_cursor}`: fetch limit + 1 rows; a next cursor exists when the extra row came back. */
export function page<R extends { seq: string }, V>(rows: R[], limit: number, view: (row: R) => V) {
  const items = rows.slice(0, limit);
  return {
    items: items.map(view),
    next_cursor: rows.length > limit ? items[items.length - 1]!.seq : null,
  };
}
