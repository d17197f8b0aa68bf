import 'reflect-metadata';
import { z } from 'zod';
import { parseConfig } from '@meridian/platform-config';
import { createAppDataSource } from '@meridian/platform-db';
import { systemClock } from '@meridian/time';
import pino from 'pino';
import { Registry } from 'prom-client';
import { configSchema } from './config/config';
import { dataSourceOptions } from './db/data-source';
import { UsageJournalRetention } from './ledger/usage-journal-retention';

/**
 * One run of the usage journals' retention against DATABASE_URL, as the app runs it hourly (ADR
 * 0104 "Storage"): the partitions of today and the next days where missing, then the
 * retirement of the expired days. For an operator who lowered `USAGE_JOURNAL_RETENTION_DAYS` and
 * wants the disk back now, or whose storage alert fired, and for the ledger bench, which retires
 * its own run's day as at `RETIRE_AS_OF` (an ISO time; default now; the partitions are made for
 * the real today). Prints `{made, madeMs, dropped, deleted, heldMs, seconds}` as JSON (madeMs:
 * making the partitions; seconds: the retirement; heldMs: the longest a drop held the usage
 * tables); exit status 0, or 2 on an error (nothing half-done: a day stopped between chunks
 * resumes).
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
      // No one scrapes a command: its gauge goes to a registry of its own.
      new Registry(),
    );
    // The app's hourly run makes the coming days' partitions first; so does this, for today.
    const making = performance.now();
    const made = await retention.ensurePartitions(new Date());
    const madeMs = performance.now() - making;
    const started = performance.now();
    const result = await retention.retire(at);
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(`${JSON.stringify({ made, madeMs, ...result, seconds })}\n`);
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
