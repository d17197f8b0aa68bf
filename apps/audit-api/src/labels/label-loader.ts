import type { DataSource } from 'typeorm';
import type { LabelPack, LabelRow } from './label.types';

export interface PackLoadResult {
  readonly pack: string;
  readonly rows: number;
  readonly removed: number;
  /** Rows the pack's dataset holds but the pack left out, by reason (`LabelPack.exclusions`). */
  readonly excluded: Readonly<Record<string, number>>;
}

/** A pack's rows after its exclusions, with the count of rows left out per reason. */
export async function packRows(
  pack: LabelPack,
  root: string,
): Promise<{ rows: LabelRow[]; excluded: Record<string, number> }> {
  const all = await pack.load(root);
  const excluded: Record<string, number> = {};
  if (!pack.exclusions) return { rows: all, excluded };
  const reasonFor = await pack.exclusions(root);
  const rows = all.filter((row) => {
    const reason = reasonFor(row);
    if (reason !== null) excluded[reason] = (excluded[reason] ?? 0) + 1;
    return reason === null;
  });
  return { rows, excluded };
}

const CHUNK = 5_000;

/**
 * Upserts each pack's rows by (pack, chain, address, category) and removes rows the pack no
 * longer holds, one transaction per pack: running it twice changes nothing.
 */
export async function loadLabelPacks(
  dataSource: DataSource,
  root: string,
  packs: readonly LabelPack[],
): Promise<PackLoadResult[]> {
  const results: PackLoadResult[] = [];
  for (const pack of packs) {
    const { rows: packed, excluded } = await packRows(pack, root);
    const rows = dedupe(packed);
    const removed = await dataSource.transaction(async (manager) => {
      const [{ now }] = (await manager.query('SELECT now() AS now')) as Array<{ now: Date }>;
      for (let i = 0; i < rows.length; i += CHUNK) {
        const chunk = rows.slice(i, i + CHUNK);
        await manager.query(
          `INSERT INTO audit.labels (pack, chain, address, category, name, url, source_date, extra, loaded_at)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::date[], $8::jsonb[], $9::timestamptz[])
           ON CONFLICT (pack, chain, address, category) DO UPDATE SET
             name = EXCLUDED.name, url = EXCLUDED.url, source_date = EXCLUDED.source_date, extra = EXCLUDED.extra, loaded_at = EXCLUDED.loaded_at`,
          [
            chunk.map((r) => r.pack),
            chunk.map((r) => r.chain),
            chunk.map((r) => r.address),
            chunk.map((r) => r.category),
            chunk.map((r) => r.name),
            chunk.map((r) => r.url),
            chunk.map((r) => r.sourceDate),
            chunk.map((r) => (r.extra === null ? null : JSON.stringify(r.extra))),
            chunk.map(() => now),
          ],
        );
      }
      const deleted = (await manager.query(
        'DELETE FROM audit.labels WHERE pack = $1 AND loaded_at < $2',
        [pack.name, now],
      )) as [unknown, number];
      return deleted[1] ?? 0;
    });
    results.push({ pack: pack.name, rows: rows.length, removed, excluded });
  }
  return results;
}

/** A pack may list one address twice (e.g. in two files); the last row wins. */
function dedupe(rows: LabelRow[]): LabelRow[] {
  const byKey = new Map<string, LabelRow>();
  for (const row of rows) byKey.set(`${row.chain}|${row.address}|${row.category}`, row);
  return [...byKey.values()];
}
