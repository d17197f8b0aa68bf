import { Client } from 'pg';

/**
 * What Postgres shows of an app's pool while a test's load runs, sampled every 5 ms on a
 * connection of its own until `stop()`: the most sessions of the database seen at once waiting
 * on a lock (`wait_event_type = 'Lock'`: a pooled connection held by a write that waits for an
 * account's row lock), and the most of `also` (a figure of the caller's, e.g. the writes queued
 * in the app) seen at the same samples. `stop()` may be called again (an afterAll, should a
 * check throw first). Every 5 ms: a tight loop takes a core from the app and Postgres.
 */
export async function sampleLockWaits(url: string, also: () => number = () => 0) {
  const client = new Client({ connectionString: url });
  await client.connect();
  const seen = { maxLockWaits: 0, maxAlso: 0, samples: 0 };
  let stopping = false;
  const sampling = (async () => {
    while (!stopping) {
      const { rows } = await client.query<{ waits: number }>(
        `SELECT count(*)::int AS waits FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()
            AND wait_event_type = 'Lock'`,
      );
      seen.maxLockWaits = Math.max(seen.maxLockWaits, rows[0]!.waits);
      seen.maxAlso = Math.max(seen.maxAlso, also());
      seen.samples += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  let stopped: Promise<typeof seen> | undefined;
  return {
    stop(): Promise<typeof seen> {
      stopping = true;
      stopped ??= sampling.then(() => client.end()).then(() => seen);
      return stopped;
    },
  };
}
