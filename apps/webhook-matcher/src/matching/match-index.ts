import {
  collectListRefs,
  compileFilter,
  needsPositiveLeaf,
  positiveKeys,
  type Activity,
  type CompiledFilter,
  type FilterKeys,
  type FilterNode,
  type Phase,
  type TriggerType,
} from '@meridian/webhooks';

/** What the matcher needs of an active webhook (read from webhooks.webhooks). */
export interface IndexedWebhook {
  readonly id: string;
  readonly accountId: string;
  readonly network: string;
  readonly triggerType: TriggerType;
  readonly tree: FilterNode;
  readonly confirmDepth: number;
  readonly phases: readonly Phase[];
}

export interface Slot {
  readonly webhook: IndexedWebhook;
  readonly filter: CompiledFilter;
  readonly keys: FilterKeys;
  /** Match stamp: the slot was already a candidate of the activity with this stamp. */
  stamp: number;
}

/** A key's slots: one slot inline (the common case: an address watched by one webhook). */
type Slots = Slot | Slot[];
type Lists = string | string[];

function addTo<V>(map: Map<string, V | V[]>, key: string, value: V): void {
  const current = map.get(key);
  if (current === undefined) map.set(key, value);
  else if (Array.isArray(current)) {
    if (!current.includes(value)) current.push(value);
  } else if (current !== value) map.set(key, [current, value]);
}

function removeFrom<V>(map: Map<string, V | V[]>, key: string, value: V): void {
  const current = map.get(key);
  if (current === undefined) return;
  if (!Array.isArray(current)) {
    if (current === value) map.delete(key);
    return;
  }
  const rest = current.filter((v) => v !== value);
  if (rest.length === 0) map.delete(key);
  else map.set(key, rest.length === 1 ? rest[0]! : rest);
}

function includes<V>(entry: V | V[] | undefined, value: V): boolean {
  if (entry === undefined) return false;
  return Array.isArray(entry) ? entry.includes(value) : entry === value;
}

/** Which activities a trigger type looks at (README "Matching"). */
function wants(trigger: TriggerType, activity: Activity): boolean {
  if (trigger === 'address_activity') return true;
  if (trigger === 'log_event') return activity.kind === 'log';
  return activity.kind === 'tx';
}

/**
 * The in-memory index of every active webhook of this replica's partition: addresses (inline
 * and through address lists), contracts, topics and transaction hashes → webhooks. An
 * activity's candidates come from its keys (from, to, emitter, contract, topics, transaction
 * hash); each candidate's compiled filter tree
 * decides. Memory: one map entry per watched address (lists shared by webhooks are stored once,
 * with the list ids as the value), so a million addresses stay around 100-150 MB.
 */
export class MatchIndex {
  private readonly slots = new Map<string, Slot>();
  private readonly inline = new Map<string, Slots>();
  private readonly contracts = new Map<string, Slots>();
  private readonly topics = new Map<string, Slots>();
  private readonly txHashes = new Map<string, Slots>();
  private readonly wildcard = new Set<Slot>();
  /** address → the lists that hold it (only lists some indexed webhook references). */
  private readonly listsOf = new Map<string, Lists>();
  /** list → its members' count and the slots referencing it. */
  private readonly lists = new Map<string, { size: number; slots: Set<Slot> }>();
  private stampCounter = 0;
  private readonly membership = (listId: string, address: string): boolean =>
    includes(this.listsOf.get(address), listId);

  get webhookCount(): number {
    return this.slots.size;
  }

  get addressCount(): number {
    return this.listsOf.size + this.inline.size;
  }

  has(webhookId: string): boolean {
    return this.slots.has(webhookId);
  }

  webhook(webhookId: string): IndexedWebhook | undefined {
    return this.slots.get(webhookId)?.webhook;
  }

  /** Lists referenced by indexed webhooks that have no members loaded yet. */
  listIds(): string[] {
    return [...this.lists.keys()];
  }

  isListReferenced(listId: string): boolean {
    return this.lists.has(listId);
  }

  /** Adds or replaces a webhook. Returns the lists it references that were not loaded before. */
  upsertWebhook(webhook: IndexedWebhook): string[] {
    this.removeWebhook(webhook.id);
    const slot: Slot = {
      webhook,
      filter: compileFilter(webhook.tree),
      keys: positiveKeys(webhook.tree),
      stamp: 0,
    };
    this.slots.set(webhook.id, slot);
    if (!needsPositiveLeaf(webhook.tree)) this.wildcard.add(slot);
    for (const a of slot.keys.addresses) addTo(this.inline, a, slot);
    for (const c of slot.keys.contracts) addTo(this.contracts, c, slot);
    for (const t of slot.keys.topics) addTo(this.topics, t, slot);
    for (const h of slot.keys.txHashes) addTo(this.txHashes, h, slot);
    const newLists: string[] = [];
    // A list under `not` still needs its members for the evaluation (a superset of candidates
    // is harmless: the filter decides).
    for (const listId of collectListRefs(webhook.tree)) {
      let list = this.lists.get(listId);
      if (!list) {
        list = { size: 0, slots: new Set() };
        this.lists.set(listId, list);
        newLists.push(listId);
      }
      list.slots.add(slot);
    }
    return newLists;
  }

  removeWebhook(webhookId: string): void {
    const slot = this.slots.get(webhookId);
    if (!slot) return;
    this.slots.delete(webhookId);
    this.wildcard.delete(slot);
    for (const a of slot.keys.addresses) removeFrom(this.inline, a, slot);
    for (const c of slot.keys.contracts) removeFrom(this.contracts, c, slot);
    for (const t of slot.keys.topics) removeFrom(this.topics, t, slot);
    for (const h of slot.keys.txHashes) removeFrom(this.txHashes, h, slot);
    for (const [listId, list] of this.lists) {
      if (!list.slots.delete(slot) || list.slots.size > 0) continue;
      this.dropListMembers(listId, list);
    }
  }

  /** Adds members to a referenced list (ignored for a list no indexed webhook references). */
  addListEntries(listId: string, addresses: Iterable<string>): void {
    const list = this.lists.get(listId);
    if (!list) return;
    for (const address of addresses) {
      const before = this.listsOf.get(address);
      if (includes(before, listId)) continue;
      addTo(this.listsOf, address, listId);
      list.size += 1;
    }
  }

  removeListEntries(listId: string, addresses: Iterable<string>): void {
    const list = this.lists.get(listId);
    if (!list) return;
    for (const address of addresses) {
      if (!includes(this.listsOf.get(address), listId)) continue;
      removeFrom(this.listsOf, address, listId);
      list.size -= 1;
    }
  }

  /** Current members of a list (a reload diffs against them). */
  listMembers(listId: string): Set<string> {
    const out = new Set<string>();
    for (const [address, lists] of this.listsOf) if (includes(lists, listId)) out.add(address);
    return out;
  }

  /** Replaces a list's members with `addresses` by difference (no window without them). */
  replaceList(listId: string, addresses: readonly string[]): void {
    const list = this.lists.get(listId);
    if (!list) return;
    const next = new Set(addresses);
    const current = list.size === 0 ? new Set<string>() : this.listMembers(listId);
    this.removeListEntries(
      listId,
      [...current].filter((a) => !next.has(a)),
    );
    this.addListEntries(
      listId,
      addresses.filter((a) => !current.has(a)),
    );
  }

  /**
   * Calls `onMatch` for every webhook of `network` whose trigger type and filter accept the
   * activity, each at most once.
   */
  match(network: string, activity: Activity, onMatch: (webhook: IndexedWebhook) => void): void {
    const stamp = ++this.stampCounter;
    const consider = (slot: Slot): void => {
      if (slot.stamp === stamp) return;
      slot.stamp = stamp;
      const w = slot.webhook;
      if (w.network !== network || !wants(w.triggerType, activity)) return;
      if (slot.filter(activity, this.membership)) onMatch(w);
    };
    const visit = (entry: Slots | undefined): void => {
      if (entry === undefined) return;
      if (Array.isArray(entry)) entry.forEach(consider);
      else consider(entry);
    };
    const address = (a: string | null): void => {
      if (a === null) return;
      visit(this.inline.get(a));
      const lists = this.listsOf.get(a);
      if (lists === undefined) return;
      if (Array.isArray(lists)) for (const l of lists) this.lists.get(l)?.slots.forEach(consider);
      else this.lists.get(lists)?.slots.forEach(consider);
    };
    address(activity.from);
    address(activity.to);
    address(activity.emitter);
    if (activity.contract !== null) visit(this.contracts.get(activity.contract));
    for (const topic of activity.topics) visit(this.topics.get(topic));
    if (this.txHashes.size > 0) visit(this.txHashes.get(activity.txHash));
    if (this.wildcard.size > 0) this.wildcard.forEach(consider);
  }

  private dropListMembers(listId: string, list: { size: number }): void {
    if (list.size > 0) this.removeListEntries(listId, this.listMembers(listId));
    this.lists.delete(listId);
  }
}
