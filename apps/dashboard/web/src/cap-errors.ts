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
