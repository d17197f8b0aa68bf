import type { DataSource } from 'typeorm';
import { attemptLogDatabase, type AttemptLogDatabase } from '../testing/attempt-log-database';
import { createAppDataSource } from '@meridian/platform-db';
import { dataSourceOptions } from '../db/data-source';
import {
  AttemptsRepository,
  IN_FLIGHT_AT_MOST_MS,
  type AttemptFinish,
  type AttemptStart,
  type Claim,
} from './attempts.repository';

const won = (claim: Claim): claim is { slot: number } => typeof claim === 'object';

/** The shared statements of the attempt log against the real Postgres. */
describe('AttemptsRepository (statements shared by the handlers in flight)', () => {
  let log: AttemptLogDatabase;
  let dataSource: DataSource;
  let repo: AttemptsRepository;

  beforeAll(async () => {
    log = await attemptLogDatabase('attempts');
    ({ dataSource, repo } = log);
  });

  afterAll(() => log?.close());

  const start = (jobId: string, attempt: number, billed = true): AttemptStart => ({
    id: `${jobId}:${attempt}`,
    jobId,
    attempt,
    eventKey: jobId,
    accountId: 'acc_1',
    webhookId: 'wh_1',
    startedAt: new Date('2026-11-25T10:00:00.123Z'),
    billed,
  });

  const failed = (): AttemptFinish => ({
    outcome: 'failure',
    finishedAt: new Date('2026-11-25T10:00:01Z'),
    errorClass: 'http_status',
    statusCode: 500,
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
    expect(claims.filter(won)).toHaveLength(40);
    for (let i = 0; i < 40; i += 1) expect([claims[i], claims[i + 40]]).toContainEqual({ slot: 1 });
    expect(await repo.claim(start(jobs[0]!, 1))).toBe('lost');
    const [{ count }] = await dataSource.query(
      `SELECT count(*)::int AS count FROM deliveries.attempts WHERE job_id LIKE 'job_claim_%'`,
    );
    expect(count).toBe(40);
  });

  it('gives an event 8 attempts across its deliveries, also when two workers claim at once', async () => {
    // Two workers (two pools, as two processes) attempt the two phases of one event at once,
    // each going on until its claim finds the event's budget spent (a lost claim looks again).
    const other = createAppDataSource(dataSourceOptions(log.url));
    await other.initialize();
    try {
      const workers = [repo, new AttemptsRepository(other)] as const;
      // Each attempt fails at once; a claim lost or refused (the other phase attempting) looks
      // again.
      const phase = async (worker: AttemptsRepository, jobId: string, eventKey: string) => {
        let won = 0;
        for (let n = 1; n <= 8; n += 1) {
          let claim: Claim;
          do claim = await worker.claim({ ...start(jobId, n), eventKey });
          while (claim === 'lost' || claim === 'busy');
          if (claim === 'spent') break;
          won += 1;
          await worker.finish(`${jobId}:${n}`, failed());
        }
        return won;
      };
      for (let round = 0; round < 5; round += 1) {
        const eventKey = `wh_budget:ev_${round}`;
        const won = await Promise.all([
          phase(workers[0], `${eventKey}:unconfirmed`, eventKey),
          phase(workers[1], `${eventKey}:confirmed`, eventKey),
        ]);
        expect(won[0] + won[1]).toBe(8);
        const slots: { event_attempt: number }[] = await dataSource.query(
          `SELECT event_attempt FROM deliveries.attempts WHERE event_key = $1 ORDER BY 1`,
          [eventKey],
        );
        expect(slots.map((r) => r.event_attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      }
      // A burst: 10 deliveries of one event on each worker claim at once, each an attempt
      // recorded without sending (a claim with its outcome), again while lost or refused: 8 are
      // won in all, whichever worker wins them.
      const eventKey = 'wh_budget:ev_burst';
      const claims = await Promise.all(
        workers.flatMap((worker, w) =>
          Array.from({ length: 10 }, async (_, i) => {
            let claim: Claim;
            do
              claim = await worker.claim(
                { ...start(`${eventKey}:w${w}:${i}`, 1), eventKey },
                failed(),
              );
            while (claim === 'lost' || claim === 'busy');
            return claim;
          }),
        ),
      );
      expect(claims.filter(won)).toHaveLength(8);
      expect(
        claims
          .filter(won)
          .map((c) => c.slot)
          .sort((a, b) => a - b),
      ).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(claims.filter((c) => c === 'spent')).toHaveLength(12);
    } finally {
      await other.destroy();
    }
  });

  it('lets one delivery of an event attempt at a time, also across two workers (ADR 0431 amendment)', async () => {
    // Two pools, as two worker processes. The unconfirmed delivery (U) on one, the confirmed one
    // (C) on the other; C passes the job ids of its earlier deliveries and the highest slot of
    // theirs it read before deciding (`earlierSlot`), as DeliveryEngine does.
    const other = createAppDataSource(dataSourceOptions(log.url));
    await other.initialize();
    const [a, b] = [repo, new AttemptsRepository(other)] as const;
    let n = 0;
    const event = () => {
      n += 1;
      const eventKey = `wh_order:ev_${n}`;
      const u = `${eventKey}:unconfirmed`;
      const c = `${eventKey}:confirmed`;
      return {
        eventKey,
        u,
        c,
        claimU: (worker: AttemptsRepository, attempt = 1, at?: Date) =>
          worker.claim({
            ...start(u, attempt),
            eventKey,
            ...(at ? { startedAt: at } : {}),
          }),
        claimC: (worker: AttemptsRepository, earlierSlot: number, attempt = 1) =>
          worker.claim({ ...start(c, attempt), eventKey, earlierJobIds: [u], earlierSlot }),
      };
    };
    try {
      // C read U before U's first claim committed (no row: earlierSlot 0), then claims while
      // U's attempt is in flight: refused, nothing recorded.
      let e = event();
      expect(await e.claimU(a)).toEqual({ slot: 1 });
      expect(await e.claimC(b, 0)).toBe('busy');
      // ... and once U's attempt failed, its read is still stale (U took slot 1 since): refused;
      // a fresh read (slot 1 seen) lets it claim, should the schedule let it go.
      await a.finish(`${e.u}:1`, failed());
      expect(await e.claimC(b, 0)).toBe('busy');
      expect(await e.claimC(b, 1)).toEqual({ slot: 2 });
      expect(await rowsOf(e.c)).toHaveLength(1);

      // C claimed first (U had no row: not waited for); U, claiming while C's attempt is in
      // flight, is refused until that attempt ended; then it takes the next slot.
      e = event();
      expect(await e.claimC(b, 0)).toEqual({ slot: 1 });
      expect(await e.claimU(a)).toBe('busy');
      await b.finish(`${e.c}:1`, failed());
      expect(await e.claimU(a)).toEqual({ slot: 2 });

      // A row left without an outcome by a stopped worker holds the other deliveries back only
      // while its request could still be in flight.
      e = event();
      expect(await e.claimC(b, 0)).toEqual({ slot: 1 });
      const later = new Date(
        Date.parse(start(e.u, 1).startedAt.toISOString()) + IN_FLIGHT_AT_MOST_MS + 1,
      );
      expect(await e.claimU(a, 1, later)).toEqual({ slot: 2 });

      // Both in one statement (one worker, one turn): the earlier phase goes, whichever was
      // submitted first.
      e = event();
      expect(await Promise.all([e.claimC(a, 0), e.claimU(a)])).toEqual(['busy', { slot: 1 }]);

      // Both at the same instant on the two workers, many times: never both attempting.
      for (let round = 0; round < 60; round += 1) {
        e = event();
        const [u, c] = await Promise.all([e.claimU(a), e.claimC(b, 0)]);
        expect([u, c].filter(won)).toHaveLength(1);
        expect(
          [u, c].filter((claim) => !won(claim)).every((x) => x === 'busy' || x === 'lost'),
        ).toBe(true);
        const [{ count }] = await dataSource.query(
          `SELECT count(*)::int AS count FROM deliveries.attempts WHERE event_key = $1`,
          [e.eventKey],
        );
        expect(count).toBe(1);
      }
    } finally {
      await other.destroy();
    }
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

  it('writes the claims and outcomes of one turn in one statement, one round trip', async () => {
    const earlier = Array.from({ length: 10 }, (_, i) => `job_mixed_old_${i}`);
    const later = Array.from({ length: 10 }, (_, i) => `job_mixed_new_${i}`);
    await Promise.all(earlier.map((job) => repo.claim(start(job, 1))));
    const query = jest.spyOn(dataSource, 'query');
    try {
      const [claims] = await Promise.all([
        Promise.all([
          ...later.map((job) => repo.claim(start(job, 1))),
          // A claim of a row that exists: lost, whatever the outcomes beside it.
          repo.claim(start(earlier[0]!, 1)),
        ]),
        ...earlier.map((job, i) =>
          repo.finish(`${job}:1`, {
            outcome: 'failure',
            finishedAt: new Date('2026-11-25T10:00:03Z'),
            statusCode: 500 + i,
            errorClass: 'http_status',
            error: `HTTP ${500 + i}`,
          }),
        ),
      ]);
      expect(query).toHaveBeenCalledTimes(1);
      expect(claims).toEqual([...later.map(() => ({ slot: 1 })), 'lost']);
    } finally {
      query.mockRestore();
    }
    for (const [i, job] of earlier.entries())
      expect(await rowsOf(job)).toEqual([
        expect.objectContaining({
          outcome: 'failure',
          status_code: 500 + i,
          error_class: 'http_status',
        }),
      ]);
    for (const job of later)
      expect(await rowsOf(job)).toEqual([expect.objectContaining({ outcome: null, billed: true })]);
  });

  it('a refused write of a shared statement fails alone; the claims and outcomes beside it are made', async () => {
    await repo.claim(start('job_mixed_fin', 1));
    const results = await Promise.allSettled([
      repo.claim(start('job_mixed_a', 1)),
      repo.claim(start('job_mixed_bad', 9)),
      repo.finish('job_mixed_fin:1', {
        outcome: 'success',
        finishedAt: new Date(),
        statusCode: 200,
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await rowsOf('job_mixed_a')).toHaveLength(1);
    expect(await rowsOf('job_mixed_bad')).toHaveLength(0);
    expect(await rowsOf('job_mixed_fin')).toEqual([
      expect.objectContaining({ outcome: 'success', status_code: 200 }),
    ]);
  });

  it('keeps 30 % of each page of the attempt log free, so that an outcome is written in place', async () => {
    const [{ reloptions }] = await dataSource.query(
      `SELECT reloptions FROM pg_class WHERE oid = 'deliveries.attempts'::regclass`,
    );
    expect(reloptions).toEqual(['fillfactor=70']);
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
