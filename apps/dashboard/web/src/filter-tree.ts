/**
 * A webhook's filter tree (set through the API: `all`, `any`, `not` and the leaves `address`,
 * `contract`, `topic`, `tx_hash`; libs/domain/webhooks filter-model.ts) as lines a person reads.
 * Read-only: the form edits only what it writes itself.
 */
export interface FilterValue {
  /** An address, topic or hash; or a list's name. */
  text: string;
  /** Set when the value is an address list (its id, for a link). */
  listId?: string;
}

export interface FilterLine {
  text: string;
  values: FilterValue[];
  /** Values left out after the first SHOWN_VALUES. */
  more: number;
  children: FilterLine[];
}

export const SHOWN_VALUES = 10;

const DIRECTIONS: Record<string, string> = {
  in: 'Address receiving',
  out: 'Address sending',
  any: 'Address sending or receiving',
};

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

function line(text: string, values: FilterValue[] = [], children: FilterLine[] = []): FilterLine {
  return {
    text,
    values: values.slice(0, SHOWN_VALUES),
    more: Math.max(0, values.length - SHOWN_VALUES),
    children,
  };
}

/** `listName` answers a list's name from its id (undefined when the page does not know it). */
export function describeFilter(
  node: unknown,
  listName: (id: string) => string | undefined,
): FilterLine {
  if (node === null || typeof node !== 'object' || Array.isArray(node))
    return line(`Filter: ${JSON.stringify(node)}`);
  const n = node as Record<string, unknown>;
  const children = (value: unknown) =>
    (Array.isArray(value) ? value : []).map((child) => describeFilter(child, listName));
  if ('all' in n) return line('All of these match:', [], children(n['all']));
  if ('any' in n) return line('Any of these matches:', [], children(n['any']));
  if ('not' in n) return line('Not this:', [], [describeFilter(n['not'], listName)]);
  if ('address' in n) {
    const leaf = (n['address'] ?? {}) as Record<string, unknown>;
    const dir = typeof leaf['dir'] === 'string' ? leaf['dir'] : 'any';
    const lists = strings(leaf['list_refs']).map((id) => ({
      text: listName(id) ?? id,
      listId: id,
    }));
    const addresses = strings(leaf['in']).map((text) => ({ text }));
    const where = lists.length
      ? addresses.length
        ? 'is one of these or in these lists'
        : 'is in these lists'
      : 'is one of';
    return line(`${DIRECTIONS[dir] ?? `Address (${dir})`} ${where}:`, [...addresses, ...lists]);
  }
  if ('contract' in n) {
    const leaf = (n['contract'] ?? {}) as Record<string, unknown>;
    return line(
      'Contract emitting the log is one of:',
      strings(leaf['in']).map((text) => ({ text })),
    );
  }
  if ('topic' in n) {
    const leaf = (n['topic'] ?? {}) as Record<string, unknown>;
    const position = Number(leaf['position']);
    return line(
      position === 0 ? 'Event signature (topic 0) is one of:' : `Topic ${position} is one of:`,
      strings(leaf['in']).map((text) => ({ text })),
    );
  }
  if ('tx_hash' in n) {
    const leaf = (n['tx_hash'] ?? {}) as Record<string, unknown>;
    return line(
      'Transaction hash is one of:',
      strings(leaf['in']).map((text) => ({ text })),
    );
  }
  return line(`Filter: ${JSON.stringify(node)}`);
}
