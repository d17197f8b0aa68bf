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
import { AddressTable } from './address-table';

/** What the matcher needs of an active webhook (read from webhooks.webhooks). */
export interface IndexedWebhook {
  readonly id: string;
  readonly accountId: string;
  readonly network: string;
  readonly triggerType: TriggerType;
  readonly tree: FilterNode;
  readonly confirmDepth: number;
  readonly phases: readonly Phase[];
  /**
   * Where its jobs go: their delivery route is its host's (ADR 0432 amendment), read from the
   * row with the rest, so it never waits for the webhook-status mirror.
   */
  readonly targetUrl: string;
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

/** Which activities a trigger type looks at (README "Matching"). */
function wants(trigger: TriggerType, activity: Activity): boolean {
  if (trigger === 'address_activity') return true;
  if (trigger === 'log_event') return activity.kind === 'log';
  return activity.kind === 'tx';
}

interface ListEntry {
  /** The list's number in the address table's values. */
  readonly num: number;
  size: number;
  readonly slots: Set<Slot>;
}

/**
 * The in-memory index of every active webhook of this replica's partition: addresses (inline
 * and through address lists), contracts, topics and transaction hashes → webhooks. An
 * activity's candidates come from its keys (from, to, emitter, contract, topics, transaction
 * hash); each candidate's compiled filter tree decides.
 *
 * Memory: list members — the bulk, up to a million addresses — live in one `AddressTable`
 * (20-byte keys in typed arrays) whose value is the list's number, or for an address in several
 * lists an index into `multi` (a shared address is stored once). Inline addresses, contracts,
 * topics and hashes (at most a few thousand per webhook) stay in Maps.
 */
export class MatchIndex {
  private readonly slots = new Map<string, Slot>();
  private readonly inline = new Map<string, Slots>();
  private readonly contracts = new Map<string, Slots>();
  private readonly topics = new Map<string, Slots>();
  private readonly txHashes = new Map<string, Slots>();
  private readonly wildcard = new Set<Slot>();
  /** address → list number (≥ 0), or -2 - i for the list numbers in `multi[i]`. */
  private readonly members = new AddressTable();
  private readonly multi: (number[] | undefined)[] = [];
  private readonly freeMulti: number[] = [];
  /** list id → its number, members' count and the slots referencing it. */
  private readonly lists = new Map<string, ListEntry>();
  /** list number → the list (undefined once dropped; numbers are reused). */
  private readonly byNum: (ListEntry | undefined)[] = [];
  private readonly freeNums: number[] = [];
  private stampCounter = 0;
  private readonly membership = (listId: string, address: string): boolean => {
    const list = this.lists.get(listId);
    return list !== undefined && this.inList(this.members.get(address), list.num);
  };

  get webhookCount(): number {
    return this.slots.size;
  }

  get addressCount(): number {
    return this.members.size + this.inline.size;
  }

  has(webhookId: string): boolean {
    return this.slots.has(webhookId);
  }

  webhook(webhookId: string): IndexedWebhook | undefined {
    return this.slots.get(webhookId)?.webhook;
  }

  /** Lists referenced by indexed webhooks. */
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
        const num = this.freeNums.pop() ?? this.byNum.length;
        list = { num, size: 0, slots: new Set() };
        this.lists.set(listId, list);
        this.byNum[num] = list;
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
      this.dropList(listId, list);
    }
  }

  /** Makes room for `count` more list memberships at once (a load that knows its lists' sizes). */
  reserveListMembers(count: number): void {
    this.members.reserve(this.members.size + count);
  }

  /** Adds members to a referenced list (ignored for a list no indexed webhook references). */
  addListEntries(listId: string, addresses: Iterable<string>): void {
    const list = this.lists.get(listId);
    if (!list) return;
    for (const address of addresses) {
      const value = this.members.get(address);
      if (value === -1) this.members.set(address, list.num);
      else if (this.inList(value, list.num)) continue;
      else if (value >= 0) this.members.set(address, this.newMulti([value, list.num]));
      else this.multi[-2 - value]!.push(list.num);
      list.size += 1;
    }
  }

  removeListEntries(listId: string, addresses: Iterable<string>): void {
    const list = this.lists.get(listId);
    if (!list) return;
    for (const address of addresses) {
      const value = this.members.get(address);
      if (!this.inList(value, list.num)) continue;
      if (value >= 0) this.members.delete(address);
      else {
        const nums = this.multi[-2 - value]!;
        nums.splice(nums.indexOf(list.num), 1);
        if (nums.length === 1) {
          this.freeMultiAt(-2 - value);
          this.members.set(address, nums[0]!);
        }
      }
      list.size -= 1;
    }
  }

  /** Current members of a list (a reload diffs against them). */
  listMembers(listId: string): Set<string> {
    const out = new Set<string>();
    const list = this.lists.get(listId);
    if (!list || list.size === 0) return out;
    for (const [address, value] of this.members.entries())
      if (this.inList(value, list.num)) out.add(address);
    return out;
  }

  /** Replaces a list's members with `addresses` by difference (no window without them). */
  replaceList(listId: string, addresses: readonly string[]): void {
    const list = this.lists.get(listId);
    if (!list) return;
    const next = new Set(addresses);
    const current = this.listMembers(listId);
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
    const out: IndexedWebhook[] = [];
    this.matchInto(network, activity, out);
    out.forEach((w) => onMatch(w));
  }

  /**
   * `match` for the hot path: appends the accepted webhooks to `out` (no closure or array per
   * activity; most activities have no candidate at all).
   */
  matchInto(network: string, activity: Activity, out: IndexedWebhook[]): void {
    const stamp = ++this.stampCounter;
    this.visitAddress(activity.from, stamp, network, activity, out);
    this.visitAddress(activity.to, stamp, network, activity, out);
    this.visitAddress(activity.emitter, stamp, network, activity, out);
    if (activity.contract !== null && this.contracts.size > 0)
      this.visit(this.contracts.get(activity.contract), stamp, network, activity, out);
    if (this.topics.size > 0)
      for (const topic of activity.topics)
        this.visit(this.topics.get(topic), stamp, network, activity, out);
    if (this.txHashes.size > 0)
      this.visit(this.txHashes.get(activity.txHash), stamp, network, activity, out);
    if (this.wildcard.size > 0)
      for (const slot of this.wildcard) this.consider(slot, stamp, network, activity, out);
  }

  private visitAddress(
    address: string | null,
    stamp: number,
    network: string,
    activity: Activity,
    out: IndexedWebhook[],
  ): void {
    if (address === null) return;
    if (this.inline.size > 0) this.visit(this.inline.get(address), stamp, network, activity, out);
    const value = this.members.get(address);
    if (value === -1) return;
    if (value >= 0) this.visitList(value, stamp, network, activity, out);
    else
      for (const num of this.multi[-2 - value]!) this.visitList(num, stamp, network, activity, out);
  }

  private visitList(
    num: number,
    stamp: number,
    network: string,
    activity: Activity,
    out: IndexedWebhook[],
  ): void {
    const list = this.byNum[num];
    if (list) for (const slot of list.slots) this.consider(slot, stamp, network, activity, out);
  }

  private visit(
    entry: Slots | undefined,
    stamp: number,
    network: string,
    activity: Activity,
    out: IndexedWebhook[],
  ): void {
    if (entry === undefined) return;
    if (Array.isArray(entry))
      for (const slot of entry) this.consider(slot, stamp, network, activity, out);
    else this.consider(entry, stamp, network, activity, out);
  }

  private consider(
    slot: Slot,
    stamp: number,
    network: string,
    activity: Activity,
    out: IndexedWebhook[],
  ): void {
    if (slot.stamp === stamp) return;
    slot.stamp = stamp;
    const w = slot.webhook;
    if (w.network !== network || !wants(w.triggerType, activity)) return;
    if (slot.filter(activity, this.membership)) out.push(w);
  }

  private inList(value: number, num: number): boolean {
    if (value === -1) return false;
    return value >= 0 ? value === num : this.multi[-2 - value]!.includes(num);
  }

  private newMulti(nums: number[]): number {
    const i = this.freeMulti.pop() ?? this.multi.length;
    this.multi[i] = nums;
    return -2 - i;
  }

  private freeMultiAt(i: number): void {
    this.multi[i] = undefined;
    this.freeMulti.push(i);
  }

  private dropList(listId: string, list: ListEntry): void {
    if (list.size > 0) this.removeListEntries(listId, this.listMembers(listId));
    this.lists.delete(listId);
    this.byNum[list.num] = undefined;
    this.freeNums.push(list.num);
  }
}
