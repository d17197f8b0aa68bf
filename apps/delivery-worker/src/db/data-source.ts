import type { AppDataSourceOptions } from '@meridian/platform-db';
import { DeliveriesInitial1764200000000 } from '../migrations/1764200000000-deliveries-initial';
import { AttemptsFillfactor1764300000000 } from '../migrations/1764300000000-attempts-fillfactor';
import { UsagePartsPublishedIndex1764700000000 } from '../migrations/1764700000000-usage-parts-published-index';
import { AttemptsStartedIndex1765000000000 } from '../migrations/1765000000000-attempts-started-index';
import { EventAttempts1765200000000 } from '../migrations/1765200000000-event-attempts';

/** The Postgres schema this app owns; no other app reads or writes it. */
export const SCHEMA = 'deliveries';

/** No entities: the attempt log is reached through repositories with explicit SQL. */
export function dataSourceOptions(url: string): AppDataSourceOptions {
  return {
    url,
    schema: SCHEMA,
    entities: [],
    migrations: [
      DeliveriesInitial1764200000000,
      AttemptsFillfactor1764300000000,
      UsagePartsPublishedIndex1764700000000,
      AttemptsStartedIndex1765000000000,
      EventAttempts1765200000000,
    ],
    applicationName: 'delivery-worker',
  };
}
