import type { Activity } from './block-activities';
import type { FilterNode } from './filter-model';

/** Membership of an address in an address list (the matcher's index answers it). */
export type ListMembership = (listId: string, address: string) => boolean;

export type CompiledFilter = (activity: Activity, inList: ListMembership) => boolean;

/**
 * The filter tree of COMPAT as a predicate over one activity, compiled once per webhook:
 * - `address` {dir}: `out` = the sender (transaction `from`, transfer `from`); `in` = the
 *   recipient (transaction `to`, transfer `to`); `any` = either, or the contract that emitted
 *   the log. The address is in `in` or in one of `list_refs`.
 * - `contract`: the log's emitter (or the transaction's `to`) is one of `in`.
 * - `topic` {position}: the log's topic at that position is one of `in` (never a transaction).
 * - `tx_hash`: the activity belongs to one of the transactions `in` (the transaction itself,
 *   and each of its logs).
 * - `all` / `any` / `not` as in logic.
 */
export function compileFilter(node: FilterNode): CompiledFilter {
  if ('all' in node) {
    const parts = node.all.map(compileFilter);
    return (a, l) => parts.every((p) => p(a, l));
  }
  if ('any' in node) {
    const parts = node.any.map(compileFilter);
    return (a, l) => parts.some((p) => p(a, l));
  }
  if ('not' in node) {
    const inner = compileFilter(node.not);
    return (a, l) => !inner(a, l);
  }
  if ('address' in node) {
    const inline = new Set(node.address.in);
    const lists = node.address.list_refs;
    const has = (address: string | null, l: ListMembership): boolean =>
      address !== null && (inline.has(address) || lists.some((list) => l(list, address)));
    switch (node.address.dir) {
      case 'in':
        return (a, l) => has(a.to, l);
      case 'out':
        return (a, l) => has(a.from, l);
      default:
        return (a, l) => has(a.from, l) || has(a.to, l) || has(a.emitter, l);
    }
  }
  if ('contract' in node) {
    const contracts = new Set(node.contract.in);
    return (a) => a.contract !== null && contracts.has(a.contract);
  }
  if ('tx_hash' in node) {
    const hashes = new Set(node.tx_hash.in);
    return (a) => hashes.has(a.txHash);
  }
  const { position } = node.topic;
  const topics = new Set(node.topic.in);
  return (a) => {
    const topic = a.topics[position];
    return topic !== undefined && topics.has(topic);
  };
}

/**
 * True when the tree can only hold if some positive leaf (address, contract, topic, tx_hash)
 * holds, so the index may find its candidates by key. A tree that can hold without one (`not` outside an
 * `all` with a positive sibling) is evaluated against every activity of its network.
 */
export function needsPositiveLeaf(node: FilterNode): boolean {
  if ('all' in node) return node.all.some(needsPositiveLeaf);
  if ('any' in node) return node.any.every(needsPositiveLeaf);
  if ('not' in node) return false;
  return true;
}

/** The keys of a tree's positive leaves, for the index (negated subtrees contribute none). */
export interface FilterKeys {
  readonly addresses: string[];
  readonly lists: string[];
  readonly contracts: string[];
  readonly topics: string[];
  readonly txHashes: string[];
}

export function positiveKeys(node: FilterNode): FilterKeys {
  const keys: FilterKeys = { addresses: [], lists: [], contracts: [], topics: [], txHashes: [] };
  const visit = (n: FilterNode): void => {
    if ('all' in n) n.all.forEach(visit);
    else if ('any' in n) n.any.forEach(visit);
    else if ('not' in n) return;
    else if ('address' in n) {
      keys.addresses.push(...n.address.in);
      keys.lists.push(...n.address.list_refs);
    } else if ('contract' in n) keys.contracts.push(...n.contract.in);
    else if ('tx_hash' in n) keys.txHashes.push(...n.tx_hash.in);
    else keys.topics.push(...n.topic.in);
  };
  visit(node);
  return keys;
}
