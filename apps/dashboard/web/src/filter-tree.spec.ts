import { describeFilter, SHOWN_VALUES, type FilterLine } from './filter-tree';

const A = '0xabcdef0123456789abcdef0123456789abcdef01';
const T = `0x${'dd'.repeat(32)}`;
const names: Record<string, string> = { al_treasury: 'Treasury' };
const listName = (id: string) => names[id];

/** The lines as indented text, values in brackets: what a reader sees. */
function render(l: FilterLine, depth = 0): string[] {
  const values = l.values.map((v) => (v.listId ? `list ${v.text}` : v.text));
  const more = l.more ? [`and ${l.more} more`] : [];
  const head = `${'  '.repeat(depth)}${l.text}${values.length ? ` [${[...values, ...more].join(', ')}]` : ''}`;
  return [head, ...l.children.flatMap((c) => render(c, depth + 1))];
}

describe('describeFilter', () => {
  it('reads a tree with every kind of node, lists by name', () => {
    const tree = {
      any: [
        { address: { dir: 'in', in: [A], list_refs: ['al_treasury'] } },
        {
          all: [
            { contract: { in: [A] } },
            { topic: { position: 0, in: [T] } },
            { topic: { position: 2, in: [T] } },
          ],
        },
        { not: { address: { dir: 'out', in: [], list_refs: ['al_unknown'] } } },
        { tx_hash: { in: [T] } },
      ],
    };
    expect(render(describeFilter(tree, listName))).toEqual([
      'Any of these matches:',
      `  Address receiving is one of these or in these lists: [${A}, list Treasury]`,
      '  All of these match:',
      `    Contract emitting the log is one of: [${A}]`,
      `    Event signature (topic 0) is one of: [${T}]`,
      `    Topic 2 is one of: [${T}]`,
      '  Not this:',
      '    Address sending is in these lists: [list al_unknown]',
      `  Transaction hash is one of: [${T}]`,
    ]);
  });

  it('keys a list value by its id, for a link', () => {
    const l = describeFilter(
      { address: { dir: 'any', in: [], list_refs: ['al_treasury'] } },
      listName,
    );
    expect(l.values).toEqual([{ text: 'Treasury', listId: 'al_treasury' }]);
    expect(l.text).toBe('Address sending or receiving is in these lists:');
  });

  it(`shows the first ${SHOWN_VALUES} values and counts the rest`, () => {
    const many = Array.from({ length: 25 }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`);
    const l = describeFilter({ address: { dir: 'any', in: many } }, listName);
    expect(l.values.map((v) => v.text)).toEqual(many.slice(0, SHOWN_VALUES));
    expect(l.more).toBe(15);
  });

  it('shows a node it does not know as JSON rather than hiding it', () => {
    expect(describeFilter({ block: { min: 1 } }, listName).text).toBe(
      'Filter: {"block":{"min":1}}',
    );
  });
});
