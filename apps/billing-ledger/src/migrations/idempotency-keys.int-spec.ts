import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { dataSourceOptions, SCHEMA } from '../db/data-source';
import { requestFingerprint } from '@meridian/platform-http';
import { IdempotencyKeys1765000000000 } from './1765000000000-idempotency-keys';
import { IdempotencyKeyResults1766200000000 } from './1766200000000-idempotency-key-results';

describe('billing migration: idempotency keys get the fingerprint of their request (real Postgres)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'billing_idempotency' });
  });
  afterAll(() => db.drop());

  it('backfills the keys of earlier top-ups with the fingerprint the app computes', async () => {
    const options = dataSourceOptions(db.url);
    const all = options.migrations as Function[]; // eslint-disable-line @typescript-eslint/no-unsafe-function-type
    const before = createAppDataSource({
      ...options,
      // The later migration that alters the table waits for it, as on a database of that time.
      migrations: all.filter(
        (m) => m !== IdempotencyKeys1765000000000 && m !== IdempotencyKeyResults1766200000000,
      ),
    });
    await before.initialize();
    try {
      await runMigrations(before, SCHEMA);
      await before.query(`
        INSERT INTO billing.accounts (id, name, type, plan_id, node_owner, plan_started_at, created_at, updated_at)
        VALUES ('acc_a', 'a', 'individual', 'free', false, now(), now(), now())`);
      await before.query(`
        INSERT INTO billing.top_ups (id, account_id, cu, source, request_key, status, created_at, clears_at)
        VALUES ('tu_1', 'acc_a', 5000, 'account', 'key-1', 'pending', now(), now()),
               ('tu_2', 'acc_a', 1000000000000, 'operator', 'key-2', 'cleared', now(), now()),
               ('tu_3', 'acc_a', 7, 'account', NULL, 'pending', now(), now())`);
    } finally {
      await before.destroy();
    }

    const after = createAppDataSource(options);
    await after.initialize();
    try {
      expect(await runMigrations(after, SCHEMA)).toEqual([
        'IdempotencyKeys1765000000000',
        'IdempotencyKeyResults1766200000000',
      ]);
      expect(
        await after.query(
          `SELECT idempotency_key, request_hash, result_id FROM billing.idempotency_keys ORDER BY 1`,
        ),
      ).toEqual([
        {
          idempotency_key: 'key-1',
          request_hash: requestFingerprint('top-up:account', { cu: 5000 }),
          result_id: null,
        },
        {
          idempotency_key: 'key-2',
          request_hash: requestFingerprint('top-up:operator', { cu: 1_000_000_000_000 }),
          result_id: null,
        },
      ]);
    } finally {
      await after.destroy();
    }
  });
});
