import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

/**
 * `npm run migrate`: applies every app's migrations (each to its own schema) against
 * DATABASE_URL by running the app's own migrate entrypoint, in order. Exits non-zero on the
 * first failure. The Kubernetes migration Job and the local stack run the same entrypoints.
 */
export const APPS_WITH_DATABASE = [
  'billing-ledger',
  'audit-api',
  'chain-indexer',
  'webhook-matcher',
  'delivery-worker',
  'dashboard',
];

function main(): void {
  const root = resolve(__dirname, '../..');
  for (const app of APPS_WITH_DATABASE) {
    const run = spawnSync(
      process.execPath,
      ['-r', '@swc-node/register', join(root, `apps/${app}/src/migrate.ts`)],
      {
        cwd: root,
        stdio: 'inherit',
      },
    );
    if (run.status !== 0) process.exit(run.status ?? 1);
  }
}

if (require.main === module) main();
