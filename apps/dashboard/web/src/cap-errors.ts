/**
 * Plan-limit refusals (409 cap_…) in the customer's words. The API's message names the cap as
 * code does (`plan limit activeWebhooks (1) would be exceeded`); its body carries `cap`, `limit`
 * and `requested`, which is what the sentence is made of.
 */
const count = (n: number, one: string, many: string) =>
  `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

const SENTENCES: Record<string, (limit: number) => string> = {
  cap_active_webhooks_exceeded: (n) =>
    `Your plan allows ${count(n, 'active webhook', 'active webhooks')}, and paused ones count too. Delete a webhook you no longer need to make room.`,
  cap_addresses_exceeded: (n) =>
    `Your plan allows ${count(n, 'address', 'addresses')} per webhook, its own and those of its address lists together.`,
  cap_account_addresses_exceeded: (n) =>
    `Your plan allows ${count(n, 'watched address', 'watched addresses')} across all your webhooks; a list used by two webhooks counts twice.`,
  cap_inline_addresses_exceeded: (n) =>
    `A webhook can name at most ${count(n, 'address', 'addresses')} directly; put more in an address list.`,
  cap_list_refs_exceeded: (n) =>
    `A webhook can refer to address lists at most ${count(n, 'time', 'times')}; a list named twice counts twice.`,
  cap_addresses_per_list_exceeded: (n) =>
    `An address list can hold at most ${count(n, 'address', 'addresses')}.`,
  cap_address_lists_exceeded: (n) =>
    `Your plan allows ${count(n, 'address list', 'address lists')}.`,
};

export const isCapError = (code: string): boolean => code.startsWith('cap_');

/** The sentence for a cap refusal; a cap this page does not know keeps the API's message. */
export function capMessage(code: string, body: Record<string, unknown>, fallback: string): string {
  const limit = body['limit'];
  const sentence = SENTENCES[code];
  if (sentence && typeof limit === 'number') return sentence(limit);
  const text = fallback.trim();
  if (!text) return 'This would go past a limit of your plan.';
  const capital = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** What `GET /webhooks/limits` says, as far as the words below need it. */
export interface LimitsFacts {
  caps: Record<string, number>;
  usage: Record<string, number>;
}

/**
 * A record's `usage`, as far as the words below read it: what the webhook holds against the
 * per-webhook caps, counted by webhook-matcher with the cap checks (types.tsx `WebhookUsage`,
 * the API's own type, is passed in: a renamed field breaks the page's build).
 */
export interface HeldCounts {
  addresses: number;
  inline_addresses: number;
  list_refs: number;
}

/**
 * The per-webhook caps this webhook is over, in the order a refused resume names the first of
 * them (planFitCounts: lists, inline addresses, addresses per webhook), each with its remedy.
 */
function overOwnCaps(caps: Record<string, number>, held: HeldCounts): string[] {
  const over: string[] = [];
  const lists = caps['list_refs'];
  const inline = caps['inline_addresses'];
  const perWebhook = caps['addresses_per_webhook'];
  if (lists !== undefined && held.list_refs > lists)
    over.push(
      `This webhook refers to address lists ${count(held.list_refs, 'time', 'times')}; your plan allows ${lists.toLocaleString('en-US')} per webhook — remove list references or upgrade.`,
    );
  if (inline !== undefined && held.inline_addresses > inline)
    over.push(
      `This webhook names ${count(held.inline_addresses, 'address', 'addresses')} directly; your plan allows ${inline.toLocaleString('en-US')} — move some to an address list or upgrade.`,
    );
  if (perWebhook !== undefined && held.addresses > perWebhook)
    over.push(
      `This webhook watches ${count(held.addresses, 'address', 'addresses')}; your plan allows ${perWebhook.toLocaleString('en-US')} per webhook — remove addresses or upgrade.`,
    );
  return over;
}

/**
 * Why a webhook is `paused_plan`, on its page before any click (QA: the reason came only with a
 * refused Resume): first the per-webhook caps the webhook itself is over, the facts its refused
 * resume gives (QA: a webhook of 20 addresses on Free's 10 was told to delete other webhooks,
 * which can never make it fit); within those, the sentence of each account cap the account is
 * over, as a refused resume would say it (paused webhooks count towards both, spec rules 1 and
 * 3); over none the page knows, the per-webhook cap. Then how it comes back. `held` is the
 * record's `usage`, what webhook-matcher counts against the per-webhook caps with the cap checks
 * themselves (`RecordUsage`, ADR 0401 amendment), never counted again here; null: the record
 * carries none (a webhook-matcher from before it).
 */
export function planPauseExplanation(
  limits: LimitsFacts,
  held: HeldCounts | null,
  route?: PlanChangeRoute,
): string {
  const { caps, usage } = limits;
  const how = route ? [upgradeAdvice(route)] : [];
  const own = held ? overOwnCaps(caps, held) : [];
  if (own.length > 0)
    return [
      'This webhook is paused because it is over its plan limits.',
      ...own,
      'Resume works once it fits; an upgrade resumes it by itself.',
      ...how,
    ].join(' ');
  const sentences: string[] = [];
  const webhooks = caps['active_webhooks'] ?? 0;
  const addresses = caps['addresses_per_account'] ?? 0;
  if ((usage['active_webhooks'] ?? 0) > webhooks)
    sentences.push(
      `You have ${count(usage['active_webhooks'] ?? 0, 'webhook', 'webhooks')}. ${SENTENCES['cap_active_webhooks_exceeded']!(webhooks)}`,
    );
  if ((usage['account_addresses'] ?? 0) > addresses)
    sentences.push(SENTENCES['cap_account_addresses_exceeded']!(addresses));
  // Within its own caps (its record's `usage`) and the account's (QA: the owner deleted another
  // webhook, and this one was still told the per-webhook sentence): it fits now, and Resume is
  // all it takes. Without a record `usage` the page cannot tell it fits: the per-webhook cap.
  if (sentences.length === 0 && held)
    return 'This webhook was paused because your account was over its plan limits, and it now fits your plan: Resume makes it active again.';
  if (sentences.length === 0)
    sentences.push(SENTENCES['cap_addresses_exceeded']!(caps['addresses_per_webhook'] ?? 0));
  return [
    'This webhook is paused because your account is over its plan limits.',
    ...sentences,
    'Resume works once it fits; an upgrade resumes it by itself.',
    ...how,
  ].join(' ');
}

/**
 * Who can change the account's plan, for the "or upgrade" advice (QA: the messages said
 * upgrade while the dashboard offered no plan control): an owner on the Plan page when the
 * deployment lets accounts pay for themselves (`self_service_billing`), a member through an
 * owner (ADR 0604 amendment), else only the operator of the service.
 */
export type PlanChangeRoute = 'self' | 'owner' | 'operator';

export function planChangeRoute(
  selfServiceBilling: boolean,
  accountRole: string | null | undefined,
): PlanChangeRoute {
  if (!selfServiceBilling) return 'operator';
  return accountRole === 'owner' ? 'self' : 'owner';
}

export function upgradeAdvice(route: PlanChangeRoute): string {
  if (route === 'self') return 'You change your plan on the Plan page.';
  if (route === 'owner')
    return "Only an owner of the account changes its plan: ask one of the account's owners.";
  return 'Plans are changed by the operator of this service: ask them to upgrade your account.';
}

/**
 * Overview's line after a downgrade (QA: it said nothing of the webhooks the plan paused): how
 * many are `paused_plan`, null when none is.
 */
export function planPausedSummary(statuses: readonly string[]): string | null {
  const paused = statuses.filter((status) => status === 'paused_plan').length;
  if (paused === 0) return null;
  return `${count(paused, 'webhook', 'webhooks')} paused: over plan limits`;
}

/** The active-webhook bar's words: every webhook counts, the plan names active ones (rule 1). */
export function webhookSlotsSummary(used: number, limit: number): string {
  return `${count(used, 'webhook', 'webhooks')}, plan allows ${limit.toLocaleString('en-US')} active`;
}

/**
 * An account holding more access tokens than its plan allows (a downgrade): billing disables
 * none, every one keeps answering and can be rolled; only a new one is refused (409
 * cap_access_tokens_exceeded) until enough are deleted (billing-ledger README, ADR 0109).
 */
export function accessTokensOverCap(
  held: number,
  cap: number,
  route?: PlanChangeRoute,
): string | null {
  if (held <= cap) return null;
  const toDelete = held - cap + 1;
  const how = route ? ` ${upgradeAdvice(route)}` : '';
  return `You hold ${count(held, 'access token', 'access tokens')} and your plan allows ${cap.toLocaleString('en-US')}. They all keep working, and rolling one still works; to make a new one, delete ${count(toDelete, 'token', 'tokens')} you no longer use, or upgrade your plan.${how}`;
}
