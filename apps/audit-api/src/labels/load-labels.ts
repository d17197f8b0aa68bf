import 'reflect-metadata';
import { join } from 'node:path';
import { commonEnv, loadConfigOrExit } from '@meridian/platform-config';
import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { z } from 'zod';
import { dataSourceOptions, SCHEMA } from '../db/data-source';
import { loadLabelPacks } from './label-loader';
import { LABEL_PACKS } from './packs';

/**
 * Loads the label packs shipped in data/labels into audit.labels (idempotent; applies pending
 * migrations first). Run: DATABASE_URL=… node -r @swc-node/register apps/audit-api/src/labels/load-labels.ts
 */
async function main(): Promise<void> {
  const env = loadConfigOrExit(
    z.object({
      DATABASE_URL: commonEnv.DATABASE_URL,
      AUDIT_LABELS_DIR: z.string().default(join(__dirname, '../../../../data/labels')),
    }),
  );
  const dataSource = createAppDataSource(dataSourceOptions(env.DATABASE_URL));
  await dataSource.initialize();
  try {
    await runMigrations(dataSource, SCHEMA);
    const started = Date.now();
    const results = await loadLabelPacks(dataSource, env.AUDIT_LABELS_DIR, LABEL_PACKS);
    for (const r of results) {
      const excluded = Object.entries(r.excluded)
        .map(([reason, n]) => `${n} ${reason}`)
        .join(', ');
      process.stdout.write(
        `audit-api labels: ${r.pack}: ${r.rows} rows (${r.removed} stale removed${excluded ? `; excluded: ${excluded}` : ''})\n`,
      );
    }
    process.stdout.write(
      `audit-api labels: ${results.length} packs loaded in ${Date.now() - started} ms\n`,
    );
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `audit-api labels: load failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
