import type { DataSource, EntityManager } from 'typeorm';
import { resealPasses, type StaleRowsQuery } from './reseal-passes';

interface Row {
  id: string;
  sealed: string;
}

const query: StaleRowsQuery = {
  table: 'app.things',
  columns: 'id, sealed',
  stale: 'NOT starts_with(sealed, $1)',
};
const CURRENT = 'v2.current.';

/**
 * A table in memory behind the one statement the passes send: stale rows after an id, in id
 * order. A row `locked` says another run holds is skipped by a SKIP LOCKED statement; a
 * statement that waits sees it after that run committed it, resealed, so not stale.
 */
function tableOf(ids: string[], locked: (id: string, pass: number) => boolean) {
  const rows = new Map(ids.map((id) => [id, { id, sealed: 'v2.old.x' }]));
  const statements: Array<{ sql: string; params: unknown[] }> = [];
  let pass = 0;
  const m = {
    query: async (sql: string, params: [string, string, number]) => {
      statements.push({ sql, params });
      const [prefix, after, limit] = params;
      if (after === '') pass += 1;
      const waits = !sql.includes('SKIP LOCKED');
      for (const r of rows.values())
        if (waits && locked(r.id, pass)) r.sealed = `${prefix}by-the-other-run`;
      return [...rows.values()]
        .filter((r) => !r.sealed.startsWith(prefix) && r.id > after && !locked(r.id, pass))
        .sort((a, b) => a.id.localeCompare(b.id))
        .slice(0, limit)
        .map((r) => ({ ...r }));
    },
  } as unknown as EntityManager;
  let transactions = 0;
  const dataSource = {
    transaction: async <T>(work: (m: EntityManager) => Promise<T>) => {
      transactions += 1;
      return work(m);
    },
  } as unknown as DataSource;
  return { rows, statements, dataSource, transactions: () => transactions, passes: () => pass };
}

/** The passes over `t`, sealing each row under the current key unless `opens` says no. */
async function passesOver(
  t: ReturnType<typeof tableOf>,
  batchSize: number,
  opens: (id: string) => boolean = () => true,
): Promise<string[]> {
  const seen: string[] = [];
  const deps = { dataSource: t.dataSource, ring: { currentPrefix: CURRENT }, batchSize };
  await resealPasses<Row>(deps, query, async (_m, row) => {
    seen.push(row.id);
    if (!opens(row.id)) return false;
    t.rows.get(row.id)!.sealed = `${CURRENT}x`;
    return true;
  });
  return seen;
}

describe('resealPasses', () => {
  it('locks stale rows in batches, in id order, with SKIP LOCKED', async () => {
    const t = tableOf(['a', 'b', 'c', 'd', 'e'], () => false);
    expect(await passesOver(t, 2)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(t.statements[0]!.sql).toMatch(
      /SELECT id, sealed FROM app\.things\s+WHERE \(NOT starts_with\(sealed, \$1\)\) AND id > \$2\s+ORDER BY id\s+LIMIT \$3\s+FOR UPDATE SKIP LOCKED/,
    );
    expect(t.statements.map((s) => s.params)).toEqual([
      [CURRENT, '', 2],
      [CURRENT, 'b', 2],
      [CURRENT, 'd', 2],
      [CURRENT, 'e', 2],
      [CURRENT, '', 2], // the second pass finds nothing,
      [CURRENT, '', 2], // nor the last, which waits for rows another run holds: done
    ]);
    expect(t.statements.at(-1)!.sql).toMatch(/FOR UPDATE\s*$/);
    expect(t.passes()).toBe(3);
  });

  it('takes 200 rows a transaction unless told otherwise', async () => {
    const t = tableOf(['a'], () => false);
    await resealPasses<Row>(
      { dataSource: t.dataSource, ring: { currentPrefix: CURRENT } },
      query,
      async () => false,
    );
    expect(t.statements[0]!.params).toEqual([CURRENT, '', 200]);
  });

  it('passes again while a pass resealed something: rows another run held come back', async () => {
    const t = tableOf(['a', 'b', 'c'], (id, pass) => id === 'b' && pass === 1);
    expect(await passesOver(t, 10)).toEqual(['a', 'c', 'b']);
    expect(t.passes()).toBe(4);
  });

  it('ends only when the rows another run held are done: the last pass waits for them', async () => {
    // 'b' is held by another run for as long as this one skips it; that run reseals it.
    const t = tableOf(['a', 'b', 'c'], (id) => id === 'b');
    expect(await passesOver(t, 10)).toEqual(['a', 'c']);
    expect([...t.rows.values()].filter((r) => !r.sealed.startsWith(CURRENT))).toEqual([]);
    expect(t.passes()).toBe(3);
  });

  it('tries a row that does not open once, and ends though it stays stale', async () => {
    const t = tableOf(['a', 'b', 'c'], () => false);
    expect(await passesOver(t, 1, (id) => id !== 'b')).toEqual(['a', 'b', 'c']);
    expect(t.passes()).toBe(3);
    expect([...t.rows.values()].filter((r) => !r.sealed.startsWith(CURRENT))).toEqual([
      { id: 'b', sealed: 'v2.old.x' },
    ]);
  });
});
