import type { AppDataSourceOptions } from '@meridian/platform-db';
import { AuditInitial1763740000000 } from '../migrations/1763740000000-audit-initial';
import { AuditVerdictVersion1795900000000 } from '../migrations/1795900000000-audit-verdict-version';
import { AuditHoneypotCreators1796000000000 } from '../migrations/1796000000000-audit-honeypot-creators';
import { AuditHoneypotTokens1796100000000 } from '../migrations/1796100000000-audit-honeypot-tokens';

/** The Postgres schema this app owns; no other app reads or writes it. */
export const SCHEMA = 'audit';

/**
 * No TypeORM entities: every write here is a single atomic statement (upsert … RETURNING,
 * conditional increments) that the repositories issue as SQL through the DataSource.
 */
export function dataSourceOptions(url: string): AppDataSourceOptions {
  return {
    url,
    schema: SCHEMA,
    entities: [],
    migrations: [
      AuditInitial1763740000000,
      AuditVerdictVersion1795900000000,
      AuditHoneypotCreators1796000000000,
      AuditHoneypotTokens1796100000000,
    ],
    applicationName: 'audit-api',
  };
}
