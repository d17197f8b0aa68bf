import type { AppDataSourceOptions } from '@meridian/platform-db';

/** The Postgres schema this app owns; no other app reads or writes it. */
export const SCHEMA = 'indexer';

export function dataSourceOptions(url: string): AppDataSourceOptions {
  return { url, schema: SCHEMA, entities: [], migrations: [], applicationName: 'chain-indexer' };
}
