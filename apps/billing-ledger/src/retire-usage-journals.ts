import 'reflect-metadata';
import { z } from 'zod';
import { parseConfig } from '@meridian/platform-config';
import { createAppDataSource } from '@meridian/platform-db';
import { systemClock } from '@meridian/time';
import pino from 'pino';
import { configSchema } from './config/config';
import { dataSourceOptions } from './db/data-source';
import { UsageJournalRetention } from './ledger/usage-journal-retention';

/**
 * One retirement of usage journal days against DATABASE_URL, as the app runs it hourly (ADR
 * 0104 "Storage"): for an operator who lowered `USAGE_JOURNAL_RETENTION_DAYS` and wants the disk
 * back now, and for the ledger bench, which retires its own run's day as at `RETIRE_AS_OF` (an
 * ISO time; default now). Prints `{dropped, deleted, seconds}` as JSON; exit status 0, or 2 on
 * an error (nothing half-done: each day is one transaction).
 */
async function main(): Promise<void> {
  const env = z
    .object({ RETIRE_AS_OF: z.iso.datetime().optional() })
    .parse({ RETIRE_AS_OF: process.env['RETIRE_AS_OF'] || undefined });
  // The app's own settings and checks (DATABASE_URL, USAGE_JOURNAL_RETENTION_DAYS' minimum).
  const config = parseConfig(configSchema, {
    HTTP_PORT: '0',
    OPERATOR_TOKEN: 'unused-by-this-command',
    ...process.env,
    LEDGER_TICK_MS: '0',
  });
  const dataSource = createAppDataSource({
    ...dataSourceOptions(config.DATABASE_URL),
    poolSize: 1,
  });
  await dataSource.initialize();
  try {
    const at = env.RETIRE_AS_OF === undefined ? new Date() : new Date(env.RETIRE_AS_OF);
    // `retire` takes its moment; the clock only drives the app's timer, which this never starts.
    const retention = new UsageJournalRetention(
      dataSource,
      systemClock,
      config,
      pino({ level: 'warn' }, pino.destination(2)),
    );
    const started = performance.now();
    const result = await retention.retire(at);
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(`${JSON.stringify({ ...result, seconds })}\n`);
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `retire-usage-journals: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(2);
});
