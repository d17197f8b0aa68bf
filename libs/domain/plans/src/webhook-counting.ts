import { capExceeded, type CapName } from './plan-limits';
import type { WebhookCaps } from './plan.types';

/**
 * The spec's counting rules for webhook caps ("Plan limits for webhooks", rules 1–6), pure:
 * 1. every non-deleted webhook counts towards active webhooks, paused ones included;
 * 2. a webhook's addresses are its own plus every referenced list's, without de-duplication;
 * 3. the account's addresses sum every non-deleted webhook's (a list referenced twice counts twice);
 * 5. every-plan caps: lists per account, lists per webhook, inline addresses, addresses per list;
 * 6. a request over a cap is a 409 with the cap's code (capExceeded).
 */
export interface CountedWebhook {
  readonly id: string;
  /** Addresses written directly in the filter (tree leaves and the shorthand). */
  readonly inlineAddresses: number;
  /** Distinct address lists the webhook references. */
  readonly listRefs: readonly string[];
}

/** Entries per list id; a list missing here counts 0. */
export type ListSizes = ReadonlyMap<string, number>;

/**
 * Rule 1, the one count of the active-webhook cap: every non-deleted webhook, paused ones
 * included (whatever paused them, fitting the plan or not). `GET /webhooks/limits` shows it as
 * `usage.active_webhooks`; a create refused on the cap names it + 1, a resume refused on it names
 * it as is (the webhook is counted already). The fit walk below decides which of them may run
 * on what is left of the caps. Callers pass the account's non-deleted webhooks.
 */
export function activeWebhookCount(nonDeleted: readonly CountedWebhook[]): number {
  return nonDeleted.length;
}

/** Rule 2: own addresses plus each referenced list's entries. */
export function addressesOfWebhook(webhook: CountedWebhook, lists: ListSizes): number {
  let total = webhook.inlineAddresses;
  for (const list of webhook.listRefs) total += lists.get(list) ?? 0;
  return total;
}

/**
 * Rule 3, the one count of the addresses-per-account cap: the addresses (rule 2) of every
 * non-deleted webhook summed, paused ones included (whatever paused them, fitting the plan or
 * not), with no de-duplication (a list referenced by two webhooks counts twice). `GET
 * /webhooks/limits` shows it as `usage.account_addresses`; a create, a PATCH of the filter or an
 * add to a referenced list refused on the cap names it as the write would leave it, a resume
 * refused on it names it as is (a paused webhook's addresses are counted already). Callers pass
 * the account's non-deleted webhooks.
 */
export function accountAddresses(webhooks: readonly CountedWebhook[], lists: ListSizes): number {
  let total = 0;
  for (const webhook of webhooks) total += addressesOfWebhook(webhook, lists);
  return total;
}

export interface WebhookWrite {
  /** The webhook as it would be after the write. */
  readonly candidate: CountedWebhook;
  /** The account's other non-deleted webhooks (without the candidate's current row). */
  readonly others: readonly CountedWebhook[];
  readonly lists: ListSizes;
  /** A new webhook takes a slot (rule 1); an update keeps its own. */
  readonly isNew: boolean;
  /** An update's addresses before the write: shrinking is allowed even over the account cap. */
  readonly previousAddresses?: number;
}

/** Throws the first cap a create or update of a webhook would exceed (409 cap_…). */
export function checkWebhookWrite(caps: WebhookCaps, write: WebhookWrite): void {
  const { candidate, others, lists, isNew } = write;
  const slots = activeWebhookCount(others) + 1;
  if (isNew && slots > caps.activeWebhooks)
    throw capExceeded('activeWebhooks', caps.activeWebhooks, slots);
  if (candidate.listRefs.length > caps.listRefs)
    throw capExceeded('listRefs', caps.listRefs, candidate.listRefs.length);
  if (candidate.inlineAddresses > caps.inlineAddresses)
    throw capExceeded('inlineAddresses', caps.inlineAddresses, candidate.inlineAddresses);
  const own = addressesOfWebhook(candidate, lists);
  if (own > caps.addressesPerWebhook)
    throw capExceeded('addressesPerWebhook', caps.addressesPerWebhook, own);
  const account = accountAddresses(others, lists) + own;
  const grows = isNew || own > (write.previousAddresses ?? 0);
  if (grows && account > caps.addressesPerAccount)
    throw capExceeded('addressesPerAccount', caps.addressesPerAccount, account);
}

/** Rule 5: a new list on an account that holds `existingLists`. */
export function checkListCreate(caps: WebhookCaps, existingLists: number): void {
  if (existingLists + 1 > caps.addressLists)
    throw capExceeded('addressLists', caps.addressLists, existingLists + 1);
}

/** Rule 5: one list holds at most `addressesPerList` addresses (409 cap_addresses_per_list_exceeded). */
export function checkListSize(caps: WebhookCaps, size: number): void {
  if (size > caps.addressesPerList)
    throw capExceeded('addressesPerList', caps.addressesPerList, size);
}

/**
 * A change of one list's size: the list cap (rule 5), then every webhook that references it is
 * checked again (addresses per webhook, rule 2) and the account total (rule 3).
 */
export function checkListResize(
  caps: WebhookCaps,
  listId: string,
  newSize: number,
  webhooks: readonly CountedWebhook[],
  lists: ListSizes,
): void {
  checkListSize(caps, newSize);
  const after = new Map(lists);
  after.set(listId, newSize);
  for (const webhook of webhooks) {
    if (!webhook.listRefs.includes(listId)) continue;
    const own = addressesOfWebhook(webhook, after);
    if (own > caps.addressesPerWebhook)
      throw capExceeded('addressesPerWebhook', caps.addressesPerWebhook, own);
  }
  const before = accountAddresses(webhooks, lists);
  const total = accountAddresses(webhooks, after);
  // Shrinking never fails on the account total, even when a downgrade left it over.
  if (total > before && total > caps.addressesPerAccount)
    throw capExceeded('addressesPerAccount', caps.addressesPerAccount, total);
}

/**
 * Which webhooks fit the plan (status table: a downgrade keeps "webhooks that still fit" active,
 * newest first, and pauses the rest; an upgrade resumes paused_plan ones newest first as far as
 * the plan allows; a resume of a paused_plan webhook needs it to fit). Walks newest first and
 * hands out what is left of the caps: a webhook fits when its own addresses are within the
 * per-webhook caps, a slot is left and its addresses fit in what the account cap has left; one
 * that fits takes its slot and its addresses (paused or not: an owner-paused webhook keeps its
 * place), one that does not fit takes nothing and the walk goes on to the next (ADR 0401, QA:
 * a newest webhook too large for Free took the one slot and the small one behind it was paused).
 */
export function fittingWebhooks(
  caps: WebhookCaps,
  newestFirst: readonly CountedWebhook[],
  lists: ListSizes,
): Set<string> {
  const fitting = new Set<string>();
  for (const [id, over] of planFit(caps, newestFirst, lists)) if (over === null) fitting.add(id);
  return fitting;
}

/**
 * The same walk as fittingWebhooks, naming for each webhook the cap it is over (null: it fits),
 * so a refused resume says which limit stands in the way.
 */
export function planFit(
  caps: WebhookCaps,
  newestFirst: readonly CountedWebhook[],
  lists: ListSizes,
): Map<string, CapName | null> {
  const result = new Map<string, CapName | null>();
  for (const [id, over] of planFitCounts(caps, newestFirst, lists))
    result.set(id, over === null ? null : over.cap);
  return result;
}

/** The cap a webhook is over and the count it would bring that cap to (capExceeded's requested). */
export interface OverCap {
  readonly cap: CapName;
  readonly requested: number;
}

/**
 * planFit's walk with, for a webhook that does not fit, what making it active would bring the
 * count to (a refused resume reports it): its lists or inline addresses, its own addresses, the
 * account's active-webhook count (`activeWebhookCount`) or the account's addresses
 * (`accountAddresses`), each as `GET /webhooks/limits` shows it, since a paused webhook is
 * counted there already (rules 1 and 3). Which webhooks fit is decided on what the walk has
 * handed out so far, not on those counts.
 */
export function planFitCounts(
  caps: WebhookCaps,
  newestFirst: readonly CountedWebhook[],
  lists: ListSizes,
): Map<string, OverCap | null> {
  const result = new Map<string, OverCap | null>();
  const count = activeWebhookCount(newestFirst);
  const total = accountAddresses(newestFirst, lists);
  // What the webhooks that fit so far hold; one that does not fit adds nothing.
  let slots = 0;
  let addresses = 0;
  for (const webhook of newestFirst) {
    const own = addressesOfWebhook(webhook, lists);
    let over: OverCap | null = null;
    if (webhook.listRefs.length > caps.listRefs)
      over = { cap: 'listRefs', requested: webhook.listRefs.length };
    else if (webhook.inlineAddresses > caps.inlineAddresses)
      over = { cap: 'inlineAddresses', requested: webhook.inlineAddresses };
    else if (own > caps.addressesPerWebhook) over = { cap: 'addressesPerWebhook', requested: own };
    else if (slots + 1 > caps.activeWebhooks) over = { cap: 'activeWebhooks', requested: count };
    else if (addresses + own > caps.addressesPerAccount)
      over = { cap: 'addressesPerAccount', requested: total };
    if (over === null) {
      slots += 1;
      addresses += own;
    }
    result.set(webhook.id, over);
  }
  return result;
}
