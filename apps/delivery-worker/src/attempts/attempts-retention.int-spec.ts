import { RetentionPruner } from '@meridian/platform-db';
import { DAY, FakeClock } from '@meridian/time';
import type { DataSource } from 'typeorm';
import { AttemptsStartedIndex1765000000000 } from '../migrations/1765000000000-attempts-started-index';
import { attemptLogDatabase, type AttemptLogDatabase } from '../testing/attempt-log-database';
import type { AttemptsRepository } from './attempts.repository';

/**
 * The attempt log's retention (ADR 0431 "Retention") against the real Postgres, with an injected
 * clock: what `AttemptsRepository.prune` may delete, run by the shared `RetentionPruner`.
 */
describe('attempt log retention', () => {
  const now = new Date('2026-12-10T00:00:00Z');
  const retentionDays = 8;
  const before = now.getTime() - retentionDays * DAY;
  let log: AttemptLogDatabase;
  let dataSource: DataSource;
  let repo: AttemptsRepository;

  beforeAll(async () => {
    log = await attemptLogDatabase('attempt_retention');
    ({ dataSource, repo } = log);
  });

  afterAll(() => log?.close());

  /** An attempt row as the worker leaves it: billed with a part, a free one, or still unbilled. */
  async function insert(
    id: string,
    startedAt: number,
    bill: 'stamped' | 'free' | 'waiting',
  ): Promise<void> {
    await dataSource.query(
      `INSERT INTO deliveries.attempts
         (id, job_id, attempt, account_id, webhook_id, started_at, finished_at, outcome, billed,
          usage_part)
       VALUES ($1, $1, 1, 'acc_1', 'wh_1', $2, $2, 'success', $3, $4)`,
      [id, new Date(startedAt), bill !== 'free', bill === 'stamped' ? 'part_1' : null],
    );
  }

  async function ids(): Promise<string[]> {
    const rows: { id: string }[] = await dataSource.query(
      `SELECT id FROM deliveries.attempts ORDER BY id`,
    );
    return rows.map((r) => r.id);
  }

  it('deletes billed attempts older than the retention, oldest first, in bounded runs; keeps the unbilled', async () => {
    await insert('expired_1', before - 5 * DAY, 'stamped');
    await insert('expired_2', before - 4 * DAY, 'free');
    await insert('expired_3', before - 3 * DAY, 'stamped');
    await insert('expired_4', before - 2 * DAY, 'free');
    await insert('expired_5', before - 1, 'stamped');
    await insert('waiting', before - 6 * DAY, 'waiting');
    await insert('at_the_limit', before, 'stamped');
    await insert('young', before + DAY, 'stamped');
    const pruned: number[] = [];
    const retention = new RetentionPruner((b, limit) => repo.prune(b, limit), {
      name: 'attempt log',
      clock: new FakeClock(now),
      retentionMs: retentionDays * DAY,
      intervalMs: 0,
      batch: 2,
      batchesPerRun: 2,
      onPruned: (n) => pruned.push(n),
    });

    // Two statements of two: the run's budget is spent, the youngest expired attempt is left.
    expect(await retention.prune()).toBe(4);
    expect(await ids()).toEqual(['at_the_limit', 'expired_5', 'waiting', 'young']);
    expect(await retention.prune()).toBe(1);
    expect(await retention.prune()).toBe(0);
    // The row is the bill of an attempt its usage part has not taken yet: kept whatever its age.
    expect(await ids()).toEqual(['at_the_limit', 'waiting', 'young']);

    await dataSource.query(
      `UPDATE deliveries.attempts SET usage_part = 'part_2' WHERE id = 'waiting'`,
    );
    expect(await retention.prune()).toBe(1);
    expect(await ids()).toEqual(['at_the_limit', 'young']);
    expect(pruned).toEqual([4, 1, 1]);
  });

  it('finds old attempts by an index on their start, rebuilt if a concurrent build left it invalid', async () => {
    const validIndex = async () =>
      dataSource.query(
        `SELECT i.indisvalid AS valid, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
          WHERE i.indexrelid = 'deliveries.attempts_started'::regclass`,
      );
    expect(await validIndex()).toEqual([
      {
        valid: true,
        def: 'CREATE INDEX attempts_started ON deliveries.attempts USING btree (started_at)',
      },
    ]);
    // What a CREATE INDEX CONCURRENTLY that failed half-way leaves behind.
    await dataSource.query(
      `UPDATE pg_index SET indisvalid = false
        WHERE indexrelid = 'deliveries.attempts_started'::regclass`,
    );
    const runner = dataSource.createQueryRunner();
    try {
      await new AttemptsStartedIndex1765000000000().up(runner);
    } finally {
      await runner.release();
    }
    expect(await validIndex()).toEqual([expect.objectContaining({ valid: true })]);
  });
});
