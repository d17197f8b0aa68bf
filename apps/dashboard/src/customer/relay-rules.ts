import { CHANGES_ITS_PLAN } from '../team/owner-required';
import type { Upstream } from '../upstream/upstream.client';

export interface RelayRule {
  upstream: Upstream;
  methods: readonly string[];
  path: RegExp;
  /**
   * Only an owner of the account may ask this (403 `owner_required` for a member, as the team
   * routes answer): changing the plan changes what every member's webhooks and tokens may do
   * (a downgrade pauses webhooks), so it is the owner's call, as providers' consoles make it.
   * Top-ups stay open to members (ADR 0604 amendment "Plan changes are the owner's"). The value
   * is what only an owner does, in the refusal's words ("only an owner of the account …").
   */
  ownerOnly?: string;
  /**
   * The resource records who acted (ADR 0604 amendment "Who bought a top-up"), as API keys do:
   * a POST's body gets `created_by`, the user's id (whatever the page sent), and a list's items
   * with a `created_by` get `created_by_email` (a user of the account; null: one since removed).
   */
  namesActor?: true;
}

const ID = '[A-Za-z0-9_-]{1,100}';

/**
 * What a customer's page may ask of the REST APIs through the BFF, with the account's own key.
 * Anything else (the operator API above all) is not reachable this way. API keys have their own
 * routes (customer.controller.ts): the dashboard's own key must stay hidden and undeletable.
 */
export const RELAY_RULES: readonly RelayRule[] = [
  { upstream: 'billing', methods: ['GET'], path: /^\/account(\/balance|\/usage)?$/ },
  {
    upstream: 'billing',
    methods: ['PUT'],
    path: /^\/account\/plan$/,
    ownerOnly: CHANGES_ITS_PLAN,
  },
  { upstream: 'billing', methods: ['GET', 'POST'], path: /^\/access-tokens$/ },
  { upstream: 'billing', methods: ['DELETE'], path: new RegExp(`^/access-tokens/${ID}$`) },
  { upstream: 'billing', methods: ['POST'], path: new RegExp(`^/access-tokens/${ID}/roll$`) },
  { upstream: 'billing', methods: ['GET', 'POST'], path: /^\/top-ups$/, namesActor: true },
  { upstream: 'webhooks', methods: ['GET', 'POST'], path: /^\/webhooks$/ },
  { upstream: 'webhooks', methods: ['GET'], path: /^\/webhooks\/limits$/ },
  {
    upstream: 'webhooks',
    methods: ['GET', 'PATCH', 'DELETE'],
    path: new RegExp(`^/webhooks/${ID}$`),
  },
  {
    upstream: 'webhooks',
    methods: ['POST'],
    path: new RegExp(`^/webhooks/${ID}/(pause|resume|test|secret/rotate)$`),
  },
  {
    upstream: 'webhooks',
    methods: ['GET'],
    path: new RegExp(`^/webhooks/${ID}/(deliveries|stats)$`),
  },
  {
    upstream: 'webhooks',
    methods: ['POST'],
    path: new RegExp(`^/webhooks/${ID}/deliveries/[A-Za-z0-9_-]{1,128}/replay$`),
  },
  { upstream: 'webhooks', methods: ['GET', 'POST'], path: /^\/address-lists$/ },
  {
    upstream: 'webhooks',
    methods: ['GET', 'PATCH', 'DELETE'],
    path: new RegExp(`^/address-lists/${ID}$`),
  },
  {
    upstream: 'webhooks',
    methods: ['GET', 'POST', 'PUT'],
    path: new RegExp(`^/address-lists/${ID}/entries$`),
  },
  {
    upstream: 'webhooks',
    methods: ['POST'],
    path: new RegExp(`^/address-lists/${ID}/entries/remove$`),
  },
  { upstream: 'audit', methods: ['GET'], path: /^\/quota$/ },
  {
    upstream: 'audit',
    methods: ['POST'],
    path: /^\/(wallet-audit\/check|wallet-audit\/audit|rug-pull\/check)$/,
  },
];

export function relayRuleFor(
  upstream: Upstream,
  method: string,
  path: string,
): RelayRule | undefined {
  return RELAY_RULES.find(
    (rule) => rule.upstream === upstream && rule.methods.includes(method) && rule.path.test(path),
  );
}
