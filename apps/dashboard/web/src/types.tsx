/** Shapes of the REST APIs' answers the pages read (billing-ledger README, COMPAT). */

/*
 * Where an API declares its answer as a zod schema (the one its view is typed by and its
 * /openapi.json shows), the page takes the type from there: a renamed field breaks the build,
 * not the page. Type-only imports: nothing of the API is bundled.
 */
import type { WebhookUsage } from '../../../webhook-matcher/src/webhooks/webhook-response.schemas';

export type {
  DeliveryAttempt,
  DeliveryStats,
} from '../../../webhook-matcher/src/deliveries/deliveries.schemas';
export type { WebhookUsage };
export interface Balance {
  state: 'ok' | 'exhausted';
  exhausted_since: string | null;
  allowance_cu: number;
  allowance_total_cu: number;
  allowance_resets_at: string | null;
  purchased_cu: number;
  /** CU spent past zero (usage in flight when the balance ran out), owed from the next top-up. */
  overdraft_cu: number;
  pending_top_up_cu: number;
  pending_top_ups: Array<{ id: string; cu: number; clears_at: string }>;
  total_cu: number;
}

export interface Account {
  id: string;
  name: string;
  type: string;
  plan: string | null;
  plan_required: boolean;
  /** Whether this deployment lets the account top up (and change plan) itself. */
  self_service_billing: boolean;
  caps: {
    node_rps: number;
    access_tokens: number;
    allowance_cu: number;
    webhooks: Record<string, number>;
    audit: { checks_per_day: number; requests_per_second: number };
  };
  balance: Balance;
}

export interface UsageItem {
  day?: string;
  network?: string;
  method?: string;
  calls: number;
  cu: number;
}

export interface Usage {
  from: string;
  to: string;
  group_by: string;
  items: UsageItem[];
  total_cu: number;
  total_calls: number;
}

export interface AccessToken {
  id: string;
  network: string;
  name: string | null;
  hint: string;
  created_at: string;
  token?: string;
}

export interface ApiKey {
  id: string;
  name: string | null;
  scopes: string[];
  hint: string;
  created_at: string;
  key?: string;
}

export interface TopUp {
  id: string;
  cu: number;
  source: string;
  status: 'pending' | 'cleared';
  created_at: string;
  clears_at: string;
  cleared_at: string | null;
  /** The key an account's top-up was made with (billing); null: the operator's or older. */
  api_key_id?: string | null;
  /** Who bought it: the dashboard user's id (billing's label); null: no person named. */
  created_by?: string | null;
  /** That user's email (the BFF's); null: a member since removed. */
  created_by_email?: string | null;
}

export interface NetworkEndpoints {
  key: string;
  display_name: string;
  testnet: boolean;
  endpoints: Array<{ endpoint: string; interface: string; url: string }>;
  /** Still served, deprecated by the spec (network S's two methods). */
  deprecated_methods: string[];
}

export interface Webhook {
  id: string;
  name: string | null;
  status: string;
  status_label: string;
  chain?: string;
  network: string;
  trigger_type: string;
  filters?: unknown;
  addresses?: string[];
  list_refs?: string[];
  confirm_depth: number;
  phases: string[];
  target_url: string;
  version: number;
  created_at: string;
  updated_at: string;
  secret?: string;
  /** The old secrets still signing beside the current one, latest end first ([] when none). */
  previous_secrets_expire_at?: string[];
  /** What it holds against the per-webhook caps, counted by the API as the caps are checked. */
  usage?: WebhookUsage;
}

export interface AddressList {
  id: string;
  name: string;
  size?: number;
  address_count?: number;
  created_at: string;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}
