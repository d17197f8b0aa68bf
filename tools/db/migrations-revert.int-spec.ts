import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { DataSource, MigrationInterface } from 'typeorm';
import {
  createAppDataSource,
  revertMigrations,
  runMigrations,
  type AppDataSourceOptions,
} from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { APPS_WITH_DATABASE } from './migrate-all';

/**
 * Every app's migrations reverted and applied again on a real Postgres, through the function
 * behind `migrate.ts revert` (deploy/README.md "Rollback"): each down() brings back the schema
 * its up() found, migrations built CONCURRENTLY included, and the data the downs keep is kept.
 */
const root = resolve(__dirname, '../..');

interface AppDatabase {
  SCHEMA: string;
  dataSourceOptions(url: string): AppDataSourceOptions;
}

/** The app's own data source module (an app is no library: loaded by path, as the manifests test does). */
async function appDatabase(app: string): Promise<AppDatabase> {
  return (await import(join(root, 'apps', app, 'src', 'db', 'data-source.ts'))) as AppDatabase;
}

type MigrationClass = new () => MigrationInterface;

/**
 * What a migration can change in the app's schema, each object as one line: relations (with
 * storage options and partition bounds), columns in order, indexes (validity too), constraints,
 * views, routines, types and triggers. TypeORM's own `migrations` table is left out.
 */
async function schemaSnapshot(ds: DataSource, schema: string): Promise<Record<string, string[]>> {
  const hidden = `WITH own AS (
      SELECT coalesce(to_regclass(quote_ident($1) || '.migrations')::oid, 0) AS oid
    ), hidden AS (
      SELECT oid FROM own
      UNION SELECT d.objid FROM pg_depend d, own
       WHERE d.refobjid = own.oid AND d.classid = 'pg_class'::regclass
      UNION SELECT i.indexrelid FROM pg_index i, own WHERE i.indrelid = own.oid
    )`;
  const lines = async (sql: string): Promise<string[]> =>
    ((await ds.query(`${hidden} ${sql}`, [schema])) as Array<{ line: string }>).map(
      (row) => row.line,
    );
  return {
    relations: await lines(`
      SELECT c.relname || ' ' || c.relkind::text || ' ' || coalesce(array_to_string(c.reloptions, ','), '-')
             || ' ' || coalesce(pg_get_expr(c.relpartbound, c.oid), '-') AS line
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.oid NOT IN (SELECT oid FROM hidden) ORDER BY 1`),
    columns: await lines(`
      SELECT c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
             || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
             || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
             || CASE a.attcompression WHEN 'l' THEN ' lz4' WHEN 'p' THEN ' pglz' ELSE '' END AS line
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
       WHERE n.nspname = $1 AND a.attnum > 0 AND NOT a.attisdropped
         AND c.relkind IN ('r', 'p', 'v') AND c.oid NOT IN (SELECT oid FROM hidden)
       ORDER BY c.relname, a.attnum`),
    indexes: await lines(`
      SELECT pg_get_indexdef(i.indexrelid) || CASE WHEN i.indisvalid THEN '' ELSE ' (invalid)' END AS line
        FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.oid NOT IN (SELECT oid FROM hidden) ORDER BY 1`),
    constraints: await lines(`
      SELECT c.relname || ' ' || co.conname || ' ' || pg_get_constraintdef(co.oid) AS line
        FROM pg_constraint co JOIN pg_class c ON c.oid = co.conrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.oid NOT IN (SELECT oid FROM hidden) ORDER BY 1`),
    views: await lines(`
      SELECT viewname || ': ' || definition AS line FROM pg_views
       WHERE schemaname = $1 ORDER BY 1`),
    routines: await lines(`
      SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS line
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = $1 ORDER BY 1`),
    types: await lines(`
      SELECT t.typname || ' ' || t.typtype::text AS line
        FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
       WHERE n.nspname = $1 AND t.typrelid = 0 AND t.typcategory <> 'A' ORDER BY 1`),
    triggers: await lines(`
      SELECT pg_get_triggerdef(t.oid) AS line
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND NOT t.tgisinternal AND c.oid NOT IN (SELECT oid FROM hidden)
       ORDER BY 1`),
  };
}

const EMPTY = {
  relations: [],
  columns: [],
  indexes: [],
  constraints: [],
  views: [],
  routines: [],
  types: [],
  triggers: [],
};

describe.each(APPS_WITH_DATABASE)('%s migrations reverted (real Postgres)', (app) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'revert' });
  });
  afterAll(() => db.drop());

  it("each down() brings back the schema its up() found; all reverted leave nothing of the app's; all apply again", async () => {
    const { SCHEMA, dataSourceOptions } = await appDatabase(app);
    const options = dataSourceOptions(db.url);
    const classes = options.migrations as MigrationClass[];
    const names = classes.map((migration) => new migration().name!);
    expect(names.length).toBeGreaterThan(0);

    // The schema after the first i migrations, for every i: what reverting down to i must give.
    const after: Array<Record<string, string[]>> = [];
    for (let i = 0; i <= classes.length; i++) {
      const ds = createAppDataSource({ ...options, migrations: classes.slice(0, i) });
      await ds.initialize();
      try {
        await runMigrations(ds, SCHEMA);
        after.push(await schemaSnapshot(ds, SCHEMA));
      } finally {
        await ds.destroy();
      }
    }
    expect(after[0]).toEqual(EMPTY);

    const ds = createAppDataSource(options);
    await ds.initialize();
    try {
      for (let i = classes.length; i > 0; i--) {
        expect(await revertMigrations(ds, SCHEMA, { count: 1 })).toEqual([names[i - 1]]);
        expect({ reverted: names[i - 1], schema: await schemaSnapshot(ds, SCHEMA) }).toEqual({
          reverted: names[i - 1],
          schema: after[i - 1],
        });
      }
      expect(await ds.query(`SELECT count(*)::int AS n FROM "${SCHEMA}".migrations`)).toEqual([
        { n: 0 },
      ]);
      await expect(revertMigrations(ds, SCHEMA, { count: 1 })).rejects.toThrow(
        'asked to revert 1, but 0 applied (newest first: none)',
      );

      expect(await runMigrations(ds, SCHEMA)).toEqual(names);
      expect(await schemaSnapshot(ds, SCHEMA)).toEqual(after[classes.length]);
      // All at once, as `revert --count N` does it, and once more up.
      expect(await revertMigrations(ds, SCHEMA, { count: names.length })).toEqual(
        [...names].reverse(),
      );
      expect(await schemaSnapshot(ds, SCHEMA)).toEqual(EMPTY);
      expect(await runMigrations(ds, SCHEMA)).toEqual(names);
      expect(await schemaSnapshot(ds, SCHEMA)).toEqual(after[classes.length]);
    } finally {
      await ds.destroy();
    }
  });
});

/** A data source of the app on a fresh database, every migration applied. */
async function migrated(app: string, db: TestDatabase) {
  const { SCHEMA, dataSourceOptions } = await appDatabase(app);
  const ds = createAppDataSource(dataSourceOptions(db.url));
  await ds.initialize();
  await runMigrations(ds, SCHEMA);
  return { ds, schema: SCHEMA };
}

describe('downs that keep data (real Postgres)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'revert_data' });
  });
  afterAll(() => db.drop());

  it("delivery-worker: the attempt log survives reverting its CONCURRENTLY indexes and the event budget; applied again, an event's earlier attempts hold no slot", async () => {
    const { ds, schema } = await migrated('delivery-worker', db);
    try {
      await ds.query(`
        INSERT INTO deliveries.attempts (id, job_id, attempt, account_id, webhook_id, started_at,
                                         finished_at, outcome, billed, usage_part, event_key, event_attempt)
        VALUES ('job_1:1', 'job_1', 1, 'acc_1', 'wh_1', '2026-11-30T06:00:00Z', '2026-11-30T06:00:01Z',
                'failure', true, 'part_1', 'wh_1:evt_1', 1),
               ('job_1:2', 'job_1', 2, 'acc_1', 'wh_1', '2026-11-30T06:01:00Z', NULL, NULL, true, NULL,
                'wh_1:evt_1', 2)`);
      await ds.query(`
        INSERT INTO deliveries.usage_parts (id, body, created_at, published_at)
        VALUES ('part_1', '{"cu":25}', '2026-11-30T06:00:02Z', '2026-11-30T06:00:03Z')`);
      const log = `SELECT id, job_id, attempt, outcome, billed, usage_part, started_at::text
                     FROM deliveries.attempts ORDER BY id`;
      const before = await ds.query(log);

      // Back to before the started-at index: both CONCURRENTLY migrations and the usage-part index.
      expect(await revertMigrations(ds, schema, { to: 'AttemptsFillfactor1764300000000' })).toEqual(
        [
          'EventAttempts1765200000000',
          'AttemptsStartedIndex1765000000000',
          'UsagePartsPublishedIndex1764700000000',
        ],
      );
      expect(await ds.query(log)).toEqual(before);
      expect(await ds.query(`SELECT id FROM deliveries.usage_parts`)).toEqual([{ id: 'part_1' }]);

      expect(await runMigrations(ds, schema)).toHaveLength(3);
      expect(await ds.query(log)).toEqual(before);
      // The budget's slots went with the down: the event counts its 8 from its next attempt.
      expect(
        await ds.query(
          `SELECT count(*)::int AS n FROM deliveries.attempts WHERE event_key IS NULL`,
        ),
      ).toEqual([{ n: 2 }]);
    } finally {
      await ds.destroy();
    }
  });

  it('billing-ledger: usage journals go back to the ledger tables and pending hourly usage is folded, ids and sums kept; applied again, the ledger reads the same', async () => {
    const { ds, schema } = await migrated('billing-ledger', db);
    try {
      await ds.query(`
        INSERT INTO billing.accounts (id, name, type, plan_id, node_owner, plan_started_at, created_at, updated_at)
        VALUES ('acc_a', 'a', 'individual', 'free', false, now(), now(), now())`);
      await ds.query(
        `INSERT INTO billing.balances (account_id, updated_at) VALUES ('acc_a', now())`,
      );
      const [{ id: topUp }] = await ds.query(`
        INSERT INTO billing.ledger_journal (idempotency_key, account_id, kind, amount_cu, occurred_at)
        VALUES ('topup:1', 'acc_a', 'topup_created', 1000, '2026-11-29T10:00:00Z') RETURNING id`);
      await ds.query(
        `INSERT INTO billing.ledger_entries (journal_id, account_id, ledger, amount_cu)
         VALUES ($1, 'acc_a', 'pending', 1000), ($1, 'acc_a', 'topup_source', -1000)`,
        [topUp],
      );
      const [{ id: usage }] = await ds.query(`
        INSERT INTO billing.usage_journal (idempotency_key, account_id, kind, amount_cu, occurred_at)
        VALUES ('usage:b1:acc_a', 'acc_a', 'usage', 30, '2026-11-30T10:00:00Z') RETURNING id`);
      await ds.query(
        `INSERT INTO billing.usage_entries (journal_id, account_id, ledger, amount_cu, occurred_at)
         VALUES ($1, 'acc_a', 'allowance', -30, '2026-11-30T10:00:00Z'),
                ($1, 'acc_a', 'usage', 30, '2026-11-30T10:00:00Z')`,
        [usage],
      );
      await ds.query(`
        INSERT INTO billing.usage_hourly (account_id, hour, network, method, calls, cu)
        VALUES ('acc_a', '2026-11-30T10:00:00Z', 'eth-mainnet', 'eth_call', 5, 50)`);
      await ds.query(`
        INSERT INTO billing.usage_hourly_pending (account_ids, hours, networks, methods, calls, cu, shard)
        VALUES ('{acc_a,acc_a}', '{2026-11-30T10:00:00Z,2026-11-30T10:00:00Z}', '{eth-mainnet,eth-mainnet}',
                '{eth_call,eth_call}', '{1,2}', '{10,20}', 3)`);
      const ledger = (journals: string, entries: string) =>
        ds.query(`SELECT j.id::text, j.idempotency_key, j.kind, j.amount_cu::int, e.id::text AS entry,
                         e.ledger, e.amount_cu::int AS entry_cu
                    FROM billing.${journals} j JOIN billing.${entries} e ON e.journal_id = j.id
                   ORDER BY e.id`);
      const before = await ledger('journals', 'entries');
      expect(before).toHaveLength(4);

      // Back before the pending rollups: through the partitions' down and the foreign keys' down.
      const reverted = await revertMigrations(ds, schema, {
        to: 'BalancesHotUpdates1764200000000',
      });
      // Every later migration is reverted too (their number grows with each release).
      expect(reverted).toContain('UsageJournalPartitions1764800000000');
      expect(reverted.at(-1)).toBe('UsageHourlyPending1764300000000');
      expect(await ledger('ledger_journal', 'ledger_entries')).toEqual(before);
      expect(
        await ds.query(
          `SELECT calls::int, cu::int FROM billing.usage_hourly WHERE account_id = 'acc_a'`,
        ),
      ).toEqual([{ calls: 8, cu: 80 }]);
      expect(await ds.query(`SELECT id FROM billing.accounts`)).toEqual([{ id: 'acc_a' }]);

      expect(await runMigrations(ds, schema)).toHaveLength(reverted.length);
      expect(await ledger('journals', 'entries')).toEqual(before);
      expect(await ds.query(`SELECT id::text FROM billing.usage_journal`)).toEqual([
        { id: String(usage) },
      ]);
    } finally {
      await ds.destroy();
    }
  });
});

/** The newest webhook-matcher migration the revert command's test expects applied. */
const NEWEST_TESTED = 'PreviousSecrets1765500000000';

describe("the image's revert command (deploy/docker/entrypoint.sh)", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'revert_command' });
    const { ds, schema } = await migrated('webhook-matcher', db);
    // The command is tested on a fixed history: whatever later releases add is reverted first,
    // so a new migration does not change the lines below.
    await revertMigrations(ds, schema, { to: NEWEST_TESTED });
    await ds.destroy();
  });
  afterAll(() => db.drop());

  /** A command's exit status and output (asynchronous, so that independent ones overlap). */
  const run = (
    command: string,
    args: string[],
    env: Record<string, string | undefined>,
  ): Promise<{ status: number | null; stdout: string; stderr: string }> =>
    new Promise((done, fail) => {
      const child = spawn(command, args, { cwd: root, env });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.on('error', fail);
      child.on('close', (status) => done({ status, stdout, stderr }));
    });
  const image = (args: string[], env: Record<string, string | undefined> = {}) =>
    run('sh', [join(root, 'deploy/docker/entrypoint.sh'), ...args], {
      ...process.env,
      APP: 'webhook-matcher',
      DATABASE_URL: db.url,
      ...env,
    });

  it('reverts what it is asked, a line per migration; refuses more than is applied, bad arguments and an unknown command with exit 2, reverting nothing', async () => {
    const four = await image(['revert', '--count', '4']);
    expect({ status: four.status, stderr: four.stderr }).toEqual({ status: 0, stderr: '' });
    expect(four.stdout.split('\n')).toEqual([
      'webhook-matcher: reverted PreviousSecrets1765500000000 (in its own transaction)',
      'webhook-matcher: reverted DeliveryReplays1765400000000 (in its own transaction)',
      'webhook-matcher: reverted DeliveryAttemptsEventSlot1765300000000 (in its own transaction)',
      'webhook-matcher: reverted DeliveryAttemptsByEvent1765200000000 (without a transaction)',
      'webhook-matcher: schema webhooks, 4 migration(s) reverted: PreviousSecrets1765500000000, ' +
        'DeliveryReplays1765400000000, DeliveryAttemptsEventSlot1765300000000, ' +
        'DeliveryAttemptsByEvent1765200000000',
      '',
    ]);

    // The refusals change nothing, so they run side by side (each is a process of its own),
    // except the two that read the schema: each takes the schema's revert lock, so that one
    // would refuse the other ("another revert ... is running"). The migrate below shows that
    // none of them reverted anything.
    const [[past, notApplied], bad, noApp, unknown] = await Promise.all([
      (async () =>
        [
          await image(['revert', '--count', '6']),
          await image(['revert', '--to', 'DeliveryReplays1765400000000']),
        ] as const)(),
      image(['revert', '--count', 'all']),
      image(['revert'], { APP: '' }),
      run(
        process.execPath,
        ['-r', '@swc-node/register', 'apps/webhook-matcher/src/migrate.ts', 'down'],
        { ...process.env, DATABASE_URL: db.url },
      ),
    ]);
    expect({ status: past.status, stdout: past.stdout, stderr: past.stderr }).toEqual({
      status: 2,
      stdout: '',
      stderr:
        'webhook-matcher: revert refused: asked to revert 6, but 5 applied (newest first: ' +
        'ResumedAt1765100000000, IdempotencyRequestHash1764400000000, DeliveriesAttempts1764300000000, ' +
        'MatchingEvents1764200000000, WebhooksInitial1764100000000)\n',
    });
    expect({ status: notApplied.status, stderr: notApplied.stderr }).toEqual({
      status: 2,
      stderr: expect.stringContaining(
        'webhook-matcher: revert refused: DeliveryReplays1765400000000 is not applied',
      ),
    });
    expect({ status: bad.status, stderr: bad.stderr }).toEqual({
      status: 2,
      stderr:
        'webhook-matcher: revert refused: --count takes a whole number from 1 to 9999, not "all"\n',
    });
    expect({ status: noApp.status, stderr: noApp.stderr }).toEqual({
      status: 2,
      stderr: 'revert: set APP to the app whose migrations to revert\n',
    });
    expect({ status: unknown.status, stderr: unknown.stderr }).toEqual({
      status: 2,
      stderr:
        'webhook-matcher: unknown command "down"; usage: migrate.ts [revert [--count N | --to ' +
        '<migration name>] (default: --count 1)]\n',
    });

    // The four reverted come back first, oldest first, then any migration newer than the test.
    const again = await image(['migrate']);
    expect({ status: again.status, stdout: again.stdout }).toEqual({
      status: 0,
      stdout: expect.stringMatching(
        /^webhook-matcher: schema webhooks, \d+ migration\(s\) applied: DeliveryAttemptsByEvent1765200000000, DeliveryAttemptsEventSlot1765300000000, DeliveryReplays1765400000000, PreviousSecrets1765500000000(, \w+)*\n$/,
      ),
    });
  });
});

describe('two reverts of one schema (real Postgres)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'revert_lock' });
  });
  afterAll(() => db.drop());

  it('the second is refused while the first holds the schema, and reverts nothing', async () => {
    const { ds, schema } = await migrated('dashboard', db);
    const applied = async () =>
      (
        (await ds.query(`SELECT name FROM dashboard.migrations ORDER BY id`)) as { name: string }[]
      ).map((row) => row.name);
    const before = await applied();
    expect(before.length).toBeGreaterThan(0);
    const first = ds.createQueryRunner();
    try {
      await first.query('SELECT pg_advisory_lock(hashtext($1))', [
        `meridian migrations revert ${schema}`,
      ]);
      await expect(revertMigrations(ds, schema, { count: 1 })).rejects.toThrow(
        'another revert of schema dashboard is running',
      );
      expect(await applied()).toEqual(before);
      await first.query('SELECT pg_advisory_unlock_all()');
      expect(await revertMigrations(ds, schema, { count: 1 })).toEqual([before.at(-1)]);
      expect(await applied()).toEqual(before.slice(0, -1));
    } finally {
      await first.release();
      await ds.destroy();
    }
  });
});
