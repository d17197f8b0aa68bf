import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EVM_ANY, type LabelCategory } from './label.types';

export interface StoredLabel {
  readonly pack: string;
  readonly chain: string;
  readonly address: string;
  readonly category: LabelCategory;
  readonly name: string | null;
  readonly url: string | null;
  readonly sourceDate: string | null;
  readonly extra: Record<string, unknown> | null;
}

interface LabelDbRow {
  pack: string;
  chain: string;
  address: string;
  category: LabelCategory;
  name: string | null;
  url: string | null;
  source_date: string | null;
  extra: Record<string, unknown> | null;
}

const toLabel = (row: LabelDbRow): StoredLabel => ({
  pack: row.pack,
  chain: row.chain,
  address: row.address,
  category: row.category,
  name: row.name,
  url: row.url,
  sourceDate: row.source_date === null ? null : String(row.source_date),
  extra: row.extra,
});

@Injectable()
export class LabelsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Which load of the label packs the table holds: every run of the loader stamps each row it
   * keeps with its own time (`loaded_at`), so the newest stamp moves with every reload. Part of
   * a wallet verdict's version: a label added to a counterparty is seen at the next check.
   */
  async datasetVersion(): Promise<string> {
    const [row] = (await this.dataSource.query(
      `SELECT coalesce(to_char(max(loaded_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '') AS version
         FROM audit.labels`,
    )) as Array<{ version: string }>;
    return row?.version ?? '';
  }

  /** Labels of these addresses on the chain, plus EVM-wide labels (OFAC, scamsniffer) for EVM chains. */
  async forAddresses(
    chain: string,
    evm: boolean,
    addresses: readonly string[],
  ): Promise<StoredLabel[]> {
    if (addresses.length === 0) return [];
    const chains = evm ? [chain, EVM_ANY] : [chain];
    const rows = (await this.dataSource.query(
      `SELECT pack, chain, address, category, name, url, to_char(source_date, 'YYYY-MM-DD') AS source_date, extra
         FROM audit.labels WHERE address = ANY($1::text[]) AND chain = ANY($2::text[]) ORDER BY pack, category`,
      [addresses, chains],
    )) as LabelDbRow[];
    return rows.map(toLabel);
  }

  /** Addresses of the chain labelled with one of the categories (e.g. mixer pools to scan for events). */
  async addressesIn(
    chain: string,
    evm: boolean,
    categories: readonly LabelCategory[],
  ): Promise<string[]> {
    const chains = evm ? [chain, EVM_ANY] : [chain];
    const rows = (await this.dataSource.query(
      'SELECT DISTINCT address FROM audit.labels WHERE category = ANY($1::text[]) AND chain = ANY($2::text[]) ORDER BY address',
      [categories, chains],
    )) as Array<{ address: string }>;
    return rows.map((row) => row.address);
  }

  /** The packs, of these names, that have no row (each probe one index lookup). */
  async packsWithoutRows(packs: readonly string[]): Promise<string[]> {
    if (!this.dataSource.isInitialized) throw new Error('waiting for postgres');
    const rows = (await this.dataSource.query(
      `SELECT name FROM unnest($1::text[]) WITH ORDINALITY AS p(name, n)
        WHERE NOT EXISTS (SELECT 1 FROM audit.labels WHERE pack = p.name) ORDER BY n`,
      [packs],
    )) as Array<{ name: string }>;
    return rows.map((row) => row.name);
  }

  /** Canonical tokens sharing a symbol or a name (case-insensitive) with a contract. */
  async canonicalTokensNamed(
    chain: string,
    symbol: string | null,
    name: string | null,
  ): Promise<StoredLabel[]> {
    if (!symbol && !name) return [];
    const rows = (await this.dataSource.query(
      `SELECT pack, chain, address, category, name, url, to_char(source_date, 'YYYY-MM-DD') AS source_date, extra FROM audit.labels
        WHERE category = 'canonical_token' AND chain = $1 AND (lower(extra->>'symbol') = lower($2) OR lower(name) = lower($3))`,
      [chain, symbol ?? '', name ?? ''],
    )) as LabelDbRow[];
    return rows.map(toLabel);
  }
}
