import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import type { DataSource } from 'typeorm';
import { dataSourceOptions, SCHEMA } from '../db/data-source';
import { AttemptsRepository, type AttemptStart } from './attempts.repository';

/** The shared statements of the attempt log against the real Postgres. */
describe('AttemptsRepository (statements shared by the handlers in flight)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let repo: AttemptsRepository;

  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'attempts' });
    await runMigrations(createAppDataSource(dataSourceOptions(db.url)), SCHEMA);
    dataSource = createAppDataSource(dataSourceOptions(db.url));
    await dataSource.initialize();
    repo = new AttemptsRepository(dataSource);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  const start = (jobId: string, attempt: number, billed = true): AttemptStart => ({
    id: `${jobId}:${attempt}`,
    jobId,
    attempt,
    accountId: 'acc_1',
    webhookId: 'wh_1',
    startedAt: new Date('2026-11-25T10:00:00.123Z'),
    billed,
  });

  async function rowsOf(jobId: string) {
    return dataSource.query(
      `SELECT id, attempt, billed, outcome, error_class, status_code, error FROM deliveries.attempts
        WHERE job_id = $1 ORDER BY attempt`,
      [jobId],
    );
  }

  it('claims each attempt once, also when claims of the same id share a statement', async () => {
    const jobs = Array.from({ length: 40 }, (_, i) => `job_claim_${i}`);
    const claims = await Promise.all([
      ...jobs.map((job) => repo.claim(start(job, 1))),
      ...jobs.map((job) => repo.claim(start(job, 1))),
    ]);
    expect(claims.filter(Boolean)).toHaveLength(40);
    for (let i = 0; i < 40; i += 1) expect([claims[i], claims[i + 40]]).toContain(true);
    expect(await repo.claim(start(jobs[0]!, 1))).toBe(false);
    const [{ count }] = await dataSource.query(
      `SELECT count(*)::int AS count FROM deliveries.attempts WHERE job_id LIKE 'job_claim_%'`,
    );
    expect(count).toBe(40);
  });

  it('stores a claim with its outcome (an attempt recorded without sending) as given', async () => {
    await repo.claim(start('job_unsent', 1, false), {
      outcome: 'skipped_breaker_open',
      finishedAt: new Date('2026-11-25T10:00:01Z'),
      errorClass: 'breaker_open',
      error: 'circuit breaker open, \'quoted\' "text" {braces}, é',
    });
    expect(await rowsOf('job_unsent')).toEqual([
      {
        id: 'job_unsent:1',
        attempt: 1,
        billed: false,
        outcome: 'skipped_breaker_open',
        error_class: 'breaker_open',
        status_code: null,
        error: 'circuit breaker open, \'quoted\' "text" {braces}, é',
      },
    ]);
  });

  it('finishes many attempts in one statement; a finished attempt keeps its first outcome', async () => {
    const jobs = Array.from({ length: 30 }, (_, i) => `job_finish_${i}`);
    await Promise.all(jobs.map((job) => repo.claim(start(job, 1))));
    await Promise.all(
      jobs.map((job, i) =>
        repo.finish(`${job}:1`, {
          outcome: i % 2 === 0 ? 'success' : 'failure',
          finishedAt: new Date(),
          statusCode: i % 2 === 0 ? 200 : 503,
          durationMs: i,
          ...(i % 2 === 0 ? {} : { errorClass: 'http_status' as const, error: 'HTTP 503' }),
        }),
      ),
    );
    await repo.finish(`${jobs[0]}:1`, {
      outcome: 'failure',
      finishedAt: new Date(),
      errorClass: 'interrupted',
    });
    expect(await rowsOf(jobs[0]!)).toEqual([
      expect.objectContaining({ outcome: 'success', status_code: 200, error_class: null }),
    ]);
    expect(await rowsOf(jobs[1]!)).toEqual([
      expect.objectContaining({ outcome: 'failure', status_code: 503, error: 'HTTP 503' }),
    ]);
  });

  it('reads the latest attempt of many jobs in one statement', async () => {
    await repo.claim(start('job_latest', 1));
    await repo.finish('job_latest:1', {
      outcome: 'failure',
      finishedAt: new Date('2026-11-25T10:00:02Z'),
      errorClass: 'timeout',
    });
    await repo.claim(start('job_latest', 2));
    const [latest, none, again] = await Promise.all([
      repo.latest('job_latest'),
      repo.latest('job_never_attempted'),
      repo.latest('job_latest'),
    ]);
    expect(latest).toEqual(
      expect.objectContaining({ id: 'job_latest:2', attempt: 2, outcome: null, billed: true }),
    );
    expect(latest!.startedAt.toISOString()).toBe('2026-11-25T10:00:00.123Z');
    expect(none).toBeUndefined();
    expect(again).toEqual(latest);
  });

  it('a claim Postgres refuses fails alone; the claims beside it are made', async () => {
    const results = await Promise.allSettled([
      repo.claim(start('job_ok_a', 1)),
      repo.claim(start('job_bad', 9)),
      repo.claim(start('job_ok_b', 1)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await rowsOf('job_ok_a')).toHaveLength(1);
    expect(await rowsOf('job_ok_b')).toHaveLength(1);
    expect(await rowsOf('job_bad')).toHaveLength(0);
  });
});
