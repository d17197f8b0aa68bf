import type { AppDataSourceOptions } from '@meridian/platform-db';
import { IndexerInitial1764300000000 } from '../migrations/1764300000000-indexer-initial';

/** The Postgres schema this app owns; no other app reads or writes it. */
export const SCHEMA = 'indexer';

export function dataSourceOptions(url: string): AppDataSourceOptions {
  return {
    url,
    schema: SCHEMA,
    entities: [],
    migrations: [IndexerInitial1764300000000],
    applicationName: 'chain-indexer',
  };
}
