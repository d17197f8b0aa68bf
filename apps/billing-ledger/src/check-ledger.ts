import 'reflect-metadata';
import { z } from 'zod';
import { commonEnv, loadConfigOrExit } from '@meridian/platform-config';
import { createAppDataSource } from '@meridian/platform-db';
import { dataSourceOptions } from './db/data-source';
import { checkLedger, ledgerHolds } from './ledger/ledger-check';

/**
 * `checkLedger` as a command against DATABASE_URL, for an operator or a test outside this app
 * (the fault suite): prints the report as JSON; exit status 0 when the ledger holds (every
 * journal balances, the ledger sums to zero, every running sum equals its entries, every entry
 * has its journal and every journal its account), else 1.
 */
async function main(): Promise<void> {
  const { DATABASE_URL } = loadConfigOrExit(z.object({ DATABASE_URL: commonEnv.DATABASE_URL }));
  const dataSource = createAppDataSource({ ...dataSourceOptions(DATABASE_URL), poolSize: 1 });
  await dataSource.initialize();
  try {
    const report = await checkLedger(dataSource);
    process.stdout.write(`${JSON.stringify(report)}\n`);
    process.exitCode = ledgerHolds(report) ? 0 : 1;
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`check-ledger: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
});
