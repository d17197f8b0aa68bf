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
    `A webhook can use at most ${count(n, 'address list', 'address lists')}.`,
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
 * Why a webhook is `paused_plan`, on its page before any click (QA: the reason came only with a
 * refused Resume): the sentence of each account cap the account is over, as a refused resume
 * would say it (paused webhooks count towards both, spec rules 1 and 3); over neither, the
 * webhook itself is over the per-webhook cap. Then how it comes back.
 */
export function planPauseExplanation(limits: LimitsFacts): string {
  const { caps, usage } = limits;
  const sentences: string[] = [];
  const webhooks = caps['active_webhooks'] ?? 0;
  const addresses = caps['addresses_per_account'] ?? 0;
  if ((usage['active_webhooks'] ?? 0) > webhooks)
    sentences.push(
      `You have ${count(usage['active_webhooks'] ?? 0, 'webhook', 'webhooks')}. ${SENTENCES['cap_active_webhooks_exceeded']!(webhooks)}`,
    );
  if ((usage['account_addresses'] ?? 0) > addresses)
    sentences.push(SENTENCES['cap_account_addresses_exceeded']!(addresses));
  if (sentences.length === 0)
    sentences.push(SENTENCES['cap_addresses_exceeded']!(caps['addresses_per_webhook'] ?? 0));
  return [
    'This webhook is paused because your account is over its plan limits.',
    ...sentences,
    'Resume works once it fits; an upgrade resumes it by itself.',
  ].join(' ');
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
export function accessTokensOverCap(held: number, cap: number): string | null {
  if (held <= cap) return null;
  const toDelete = held - cap + 1;
  return `You hold ${count(held, 'access token', 'access tokens')} and your plan allows ${cap.toLocaleString('en-US')}. They all keep working, and rolling one still works; to make a new one, delete ${count(toDelete, 'token', 'tokens')} you no longer use, or upgrade your plan.`;
}
