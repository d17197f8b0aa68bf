import { DomainError, quoteInput } from '@meridian/errors';
import { checkEvmAddress } from '@meridian/networks';
import { z } from 'zod';
import { MAX_FILTER_DEPTH, MAX_FILTER_NODES, MAX_TX_HASHES, TX_HASH_PATTERN } from './bounds';

export const TRIGGER_TYPES = ['address_activity', 'log_event', 'tx_confirmation'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];
export const PHASES = ['unconfirmed', 'confirmed'] as const;
export type Phase = (typeof PHASES)[number];

/** Address list ids as the API hands them out (`al_` + 24 lower-case base32 characters). */
export const LIST_ID_PATTERN = /^al_[a-z2-7]{24}$/;
const TOPIC_PATTERN = /^0x[0-9a-fA-F]{64}$/;

export type AddressDirection = 'in' | 'out' | 'any';

/** The normalised tree (addresses and topics lower case, defaults filled in). */
export type FilterNode =
  | { readonly all: readonly FilterNode[] }
  | { readonly any: readonly FilterNode[] }
  | { readonly not: FilterNode }
  | {
      readonly address: {
        readonly dir: AddressDirection;
        readonly in: readonly string[];
        readonly list_refs: readonly string[];
      };
    }
  | { readonly contract: { readonly in: readonly string[] } }
  | { readonly topic: { readonly position: 0 | 1 | 2 | 3; readonly in: readonly string[] } }
  | { readonly tx_hash: { readonly in: readonly string[] } };

/**
 * Unbounded here on purpose: how many addresses and lists a filter holds are plan caps (409
 * cap_inline_addresses_exceeded, cap_list_refs_exceeded, …, counted by @meridian/plans on the
 * walk's numbers) and hashes are the walk's filter_too_large; the 5 MiB body (413) bounds them.
 */
const stringList = z.array(z.string());

type RawNode = {
  all?: RawNode[];
  any?: RawNode[];
  not?: RawNode;
  address?: { dir?: AddressDirection; in?: string[]; list_refs?: string[] };
  contract?: { in: string[] };
  topic?: { position: number; in: string[] };
  tx_hash?: { in: string[] };
};

/**
 * Shape of one node: exactly one of the seven keys. Values are checked for form (hex, ids) by the
 * walk below, so a bad address names itself and the JSON path of its node.
 */
const nodeSchema: z.ZodType<RawNode> = z.lazy(() =>
  z
    .strictObject({
      all: z.array(nodeSchema).min(1).max(MAX_FILTER_NODES).optional(),
      any: z.array(nodeSchema).min(1).max(MAX_FILTER_NODES).optional(),
      not: nodeSchema.optional(),
      address: z
        .strictObject({
          dir: z.enum(['in', 'out', 'any']).optional(),
          in: stringList.optional(),
          list_refs: stringList.optional(),
        })
        .optional(),
      contract: z.strictObject({ in: stringList.min(1) }).optional(),
      topic: z
        .strictObject({
          position: z.number().int().min(0).max(3),
          in: z.array(z.string()).min(1).max(1_000),
        })
        .optional(),
      // The 1,000-hash limit is the walk's (filter_too_large, naming the first hash over it),
      // as for inline addresses; the schema only bounds the shape.
      tx_hash: z.strictObject({ in: stringList.min(1) }).optional(),
    })
    .refine((node) => Object.keys(node).length === 1, {
      message: 'a filter node has exactly one of all, any, not, address, contract, topic, tx_hash',
    }),
);

/** The filter part of a create or patch body (COMPAT): a tree and/or the top-level shorthand. */
export interface FilterInput {
  readonly filters?: unknown;
  readonly addresses?: unknown;
  readonly list_refs?: unknown;
  /** When given, rules of the trigger type are checked too (tx_confirmation needs tx_hash). */
  readonly trigger_type?: unknown;
}

export interface NormalizedFilter {
  /** The tree as given (normalised), or null when only the shorthand was used. */
  readonly filters: FilterNode | null;
  readonly addresses: readonly string[];
  readonly listRefs: readonly string[];
  /** What the matcher evaluates: the tree, the shorthand as an address leaf, or both under `all`. */
  readonly tree: FilterNode;
  /** Addresses written directly in the filter (address and contract leaves and the shorthand). */
  readonly inlineAddresses: number;
  /** Distinct address lists referenced anywhere, in first-seen order. */
  readonly referencedLists: readonly string[];
  /**
   * Every list reference, in tree order then the shorthand's: a list in two leaves is here twice
   * (what the caps count, no de-duplication); never twice from one `list_refs`.
   */
  readonly listReferences: readonly string[];
}

/**
 * `details` of a refusal in the house form, as platform-http's 400s give them (`issueWhere`):
 * `path` from the part of the request (`body.filters.any[0]`, `query.since`, `headers.if-match`)
 * and that part as `location`. Here rather than in platform-http so that this lib (a domain lib
 * uses only domain libs) and webhook-matcher's schemas, which the dashboard's browser build
 * reads, use it too. Every path of this file starts with `body`.
 */
export const refusedAt = (path: string): { location: string; path: string } => ({
  location: /^[^.[]*/.exec(path)![0],
  path,
});

const invalid = (code: string, path: string, message: string) =>
  new DomainError(code, 'invalid', `${path}: ${message}`, { details: refusedAt(path) });

function pathOf(base: string, segments: readonly PropertyKey[]): string {
  let out = base;
  for (const segment of segments)
    out += typeof segment === 'number' ? `[${segment}]` : `.${String(segment)}`;
  return out;
}

/**
 * An EVM address as given → lower case (ADR 0403: all lower, all upper or a right EIP-55
 * checksum, `checkEvmAddress` of @meridian/networks, the rule audit-api applies too). Malformed:
 * 400 invalid_address; mixed case with a wrong checksum: 400 invalid_address_checksum with the
 * address checksummed as `expected`. Both name the value and its path.
 */
export function normalizeAddress(value: string, path: string): string {
  const evm = checkEvmAddress(value);
  if (evm.ok) return evm.lower;
  throw addressError(value, path, evm);
}

/** The 400 of an address `checkEvmAddress` refused. */
function addressError(
  value: string,
  path: string,
  evm: { reason: 'format' } | { reason: 'checksum'; expected: string },
): DomainError {
  if (evm.reason === 'format')
    return invalid(
      'invalid_address',
      path,
      `${quoteInput(value)} is not a 0x-prefixed 20-byte hex address`,
    );
  return new DomainError(
    'invalid_address_checksum',
    'invalid',
    `${path}: ${quoteInput(value)} has mixed case but a wrong EIP-55 checksum (a typo?); ` +
      `checksummed it is ${evm.expected}, or give it all lower case`,
    { details: { ...refusedAt(path), expected: evm.expected } },
  );
}

/** One entry of a list's bulk change refused: its path, code and, for a checksum, the form. */
export interface RefusedAddress {
  readonly path: string;
  readonly error: 'invalid_address' | 'invalid_address_checksum';
  readonly expected?: string;
}

/** How many refused entries a bulk change's 400 lists (`refused`; `refused_total` counts all). */
export const MAX_REFUSED_LISTED = 100;

/**
 * Every address of a bulk change (an address list's create, add, replace or remove) → lower case,
 * duplicates collapsed; or one 400 for the first refused entry (its code, message and `path`, as
 * `normalizeAddress`) that also lists every refused entry (`refused`, at most
 * MAX_REFUSED_LISTED, `refused_total`), so a pasted file's typos show in one answer. `base`: the
 * list's path from the body (`body.addresses`), as every path here.
 */
export function normalizeAddresses(values: readonly string[], base: string): string[] {
  const out = new Set<string>();
  const refused: RefusedAddress[] = [];
  let first: DomainError | null = null;
  let total = 0;
  for (const [i, value] of values.entries()) {
    const evm = checkEvmAddress(value);
    if (evm.ok) {
      out.add(evm.lower);
      continue;
    }
    const path = `${base}[${i}]`;
    total += 1;
    first ??= addressError(value, path, evm);
    if (refused.length < MAX_REFUSED_LISTED)
      refused.push(
        evm.reason === 'format'
          ? { path, error: 'invalid_address' }
          : { path, error: 'invalid_address_checksum', expected: evm.expected },
      );
  }
  if (first)
    throw new DomainError(first.code, first.kind, first.message, {
      details: { ...first.details, refused, refused_total: total },
    });
  return [...out];
}

function normalizeListRef(value: string, path: string): string {
  if (!LIST_ID_PATTERN.test(value))
    throw invalid('invalid_list_ref', path, `${quoteInput(value)} is not an address list id`);
  return value;
}

/**
 * The tree's size and depth, checked before any recursive step (the zod schema and `walk` both
 * recurse once per level): iteratively, in the order `walk` visits nodes, so the first node over
 * a limit is the one `walk` would name. A 5 MiB body nests `{"not":…}` some 650,000 deep; the
 * recursive parse overflowed the stack (a 500) somewhere between 500 and 1,000 levels. Only the
 * structural keys are followed and at most MAX_FILTER_NODES + 1 nodes are counted whatever the
 * body holds; anything of the wrong shape is left for the schema to report.
 */
export function checkFilterBounds(raw: unknown, base = 'body.filters'): void {
  const stack: Array<{ node: unknown; path: string; depth: number }> = [
    { node: raw, path: base, depth: 1 },
  ];
  let nodes = 0;
  while (stack.length > 0) {
    const { node, path, depth } = stack.pop()!;
    if (typeof node !== 'object' || node === null || Array.isArray(node)) continue;
    nodes += 1;
    if (depth > MAX_FILTER_DEPTH)
      throw invalid('filter_too_deep', path, `filters are at most ${MAX_FILTER_DEPTH} levels deep`);
    if (nodes > MAX_FILTER_NODES)
      throw invalid('filter_too_large', path, `filters have at most ${MAX_FILTER_NODES} nodes`);
    const { all, any, not } = node as { all?: unknown; any?: unknown; not?: unknown };
    const key = all !== undefined ? 'all' : any !== undefined ? 'any' : 'not';
    const children = key === 'all' ? all : any;
    if (Array.isArray(children)) {
      // Reversed onto the stack, so children are visited first to last as `walk` does.
      for (let i = children.length - 1; i >= 0; i--)
        stack.push({ node: children[i], path: `${path}.${key}[${i}]`, depth: depth + 1 });
    } else if (key === 'not' && not !== undefined)
      stack.push({ node: not, path: `${path}.not`, depth: depth + 1 });
  }
}

interface WalkState {
  nodes: number;
  inline: number;
  txHashes: number;
  lists: Set<string>;
  references: string[];
}

/**
 * The list references of one `list_refs` (a leaf's or the shorthand's): each must name another
 * list, else 400 `duplicate_list_ref` naming the list and the path of the repeat (QA: `[t, t,
 * big]` counted t once; a repeat in one array matches nothing more, so it is a mistake, not a
 * second watch). The same list in two leaves (`dir: in` here, a `not` there) means something
 * each time, so it is kept, and the caps count every reference with no de-duplication (spec
 * plan limits rules 2, 3 and 5): `listReferences`.
 */
function referenceLists(state: WalkState, lists: readonly string[], path: string): void {
  const seen = new Set<string>();
  lists.forEach((list, i) => {
    if (seen.has(list))
      throw new DomainError(
        'duplicate_list_ref',
        'invalid',
        `${path}[${i}]: address list ${list} is already in this list_refs; reference a list once`,
        { details: { ...refusedAt(`${path}[${i}]`), list_id: list } },
      );
    seen.add(list);
    state.lists.add(list);
    state.references.push(list);
  });
}

function walk(node: RawNode, path: string, depth: number, state: WalkState): FilterNode {
  state.nodes += 1;
  if (depth > MAX_FILTER_DEPTH)
    throw invalid('filter_too_deep', path, `filters are at most ${MAX_FILTER_DEPTH} levels deep`);
  if (state.nodes > MAX_FILTER_NODES)
    throw invalid('filter_too_large', path, `filters have at most ${MAX_FILTER_NODES} nodes`);
  if (node.all)
    return { all: node.all.map((c, i) => walk(c, `${path}.all[${i}]`, depth + 1, state)) };
  if (node.any)
    return { any: node.any.map((c, i) => walk(c, `${path}.any[${i}]`, depth + 1, state)) };
  if (node.not) return { not: walk(node.not, `${path}.not`, depth + 1, state) };
  if (node.address) {
    const leaf = node.address;
    const addresses = (leaf.in ?? []).map((a, i) =>
      normalizeAddress(a, `${path}.address.in[${i}]`),
    );
    const lists = (leaf.list_refs ?? []).map((l, i) =>
      normalizeListRef(l, `${path}.address.list_refs[${i}]`),
    );
    if (addresses.length === 0 && lists.length === 0)
      throw invalid(
        'invalid_filter',
        `${path}.address`,
        'an address leaf needs `in` or `list_refs`',
      );
    state.inline += addresses.length;
    referenceLists(state, lists, `${path}.address.list_refs`);
    return { address: { dir: leaf.dir ?? 'any', in: addresses, list_refs: lists } };
  }
  if (node.contract) {
    const addresses = node.contract.in.map((a, i) =>
      normalizeAddress(a, `${path}.contract.in[${i}]`),
    );
    state.inline += addresses.length;
    return { contract: { in: addresses } };
  }
  if (node.tx_hash) {
    const hashes = node.tx_hash.in.map((h, i) => {
      const at = `${path}.tx_hash.in[${i}]`;
      if (!TX_HASH_PATTERN.test(h))
        throw invalid(
          'invalid_tx_hash',
          at,
          `${quoteInput(h)} is not a 32-byte hex transaction hash`,
        );
      if (++state.txHashes > MAX_TX_HASHES)
        throw invalid(
          'filter_too_large',
          at,
          `filters watch at most ${MAX_TX_HASHES} transaction hashes`,
        );
      return h.toLowerCase();
    });
    return { tx_hash: { in: hashes } };
  }
  const topic = node.topic!;
  const topics = topic.in.map((t, i) => {
    if (!TOPIC_PATTERN.test(t))
      throw invalid(
        'invalid_topic',
        `${path}.topic.in[${i}]`,
        `${quoteInput(t)} is not a 32-byte hex topic`,
      );
    return t.toLowerCase();
  });
  return { topic: { position: topic.position as 0 | 1 | 2 | 3, in: topics } };
}

/**
 * Validates and normalises the filter of a webhook. Errors are 400 with a code naming the
 * problem and `details` naming the node in the house form (`location` `body`, `path`
 * `body.filters.any[2].address.in[5]`). Caps that depend on the
 * plan or on list sizes are checked by @meridian/plans (webhook-counting) on the numbers here.
 */
export function normalizeFilter(input: FilterInput): NormalizedFilter {
  const state: WalkState = {
    nodes: 0,
    inline: 0,
    txHashes: 0,
    lists: new Set(),
    references: [],
  };
  let filters: FilterNode | null = null;
  if (input.filters !== undefined && input.filters !== null) {
    checkFilterBounds(input.filters);
    const parsed = nodeSchema.safeParse(input.filters);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw invalid('invalid_filter', pathOf('body.filters', issue.path), issue.message);
    }
    filters = walk(parsed.data, 'body.filters', 1, state);
  }
  const shorthand = stringList.optional();
  const rawAddresses = shorthand.safeParse(input.addresses ?? undefined);
  if (!rawAddresses.success)
    throw invalid('malformed_body', 'body.addresses', 'a list of addresses');
  const rawLists = shorthand.safeParse(input.list_refs ?? undefined);
  if (!rawLists.success)
    throw invalid('malformed_body', 'body.list_refs', 'a list of address list ids');
  const addresses = (rawAddresses.data ?? []).map((a, i) =>
    normalizeAddress(a, `body.addresses[${i}]`),
  );
  const listRefs = (rawLists.data ?? []).map((l, i) => normalizeListRef(l, `body.list_refs[${i}]`));
  state.inline += addresses.length;
  referenceLists(state, listRefs, 'body.list_refs');
  const shorthandLeaf: FilterNode | null =
    addresses.length > 0 || listRefs.length > 0
      ? { address: { dir: 'any', in: addresses, list_refs: listRefs } }
      : null;
  const tree =
    filters && shorthandLeaf ? { all: [filters, shorthandLeaf] } : (filters ?? shorthandLeaf);
  if (tree === null)
    throw invalid('filter_required', 'body.filters', 'give `filters`, `addresses` or `list_refs`');
  if (input.trigger_type === 'tx_confirmation' && !needsTxHash(tree))
    throw invalid(
      'tx_hash_required',
      'body.filters',
      'a tx_confirmation webhook watches transaction hashes: every way its filter can match needs a `tx_hash` leaf',
    );
  return {
    filters,
    addresses,
    listRefs,
    tree,
    inlineAddresses: state.inline,
    referencedLists: [...state.lists],
    listReferences: state.references,
  };
}

/**
 * True when the tree can only hold for a watched transaction hash: a `tx_hash` leaf on every
 * path that can make it true (`all` needs one child so bound, `any` all of them; `not` never).
 */
export function needsTxHash(node: FilterNode): boolean {
  if ('all' in node) return node.all.some(needsTxHash);
  if ('any' in node) return node.any.every(needsTxHash);
  return 'tx_hash' in node;
}

/** Every inline address of a tree (address and contract leaves), lower case, in order. */
export function collectAddresses(node: FilterNode): string[] {
  const out: string[] = [];
  const visit = (n: FilterNode): void => {
    if ('all' in n) n.all.forEach(visit);
    else if ('any' in n) n.any.forEach(visit);
    else if ('not' in n) visit(n.not);
    else if ('address' in n) out.push(...n.address.in);
    else if ('contract' in n) out.push(...n.contract.in);
  };
  visit(node);
  return out;
}

/** Every list id a tree references (distinct, first-seen order). */
export function collectListRefs(node: FilterNode): string[] {
  const out = new Set<string>();
  const visit = (n: FilterNode): void => {
    if ('all' in n) n.all.forEach(visit);
    else if ('any' in n) n.any.forEach(visit);
    else if ('not' in n) visit(n.not);
    else if ('address' in n) n.address.list_refs.forEach((l) => out.add(l));
  };
  visit(node);
  return [...out];
}
