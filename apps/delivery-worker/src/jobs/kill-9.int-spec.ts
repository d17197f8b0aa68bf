import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Receiver, WorkerHarness, until } from '../testing/worker-harness';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '../../../..');

/** The last lines each worker process wrote (info and up), shown when the test fails. */
const output: string[] = [];

/** The real worker as a process of its own (so it can be killed with SIGKILL mid-stream). */
function startWorker(env: Record<string, string>, name: string): ChildProcess {
  const child = spawn(
    process.execPath,
    ['-r', '@swc-node/register', 'apps/delivery-worker/src/main.ts'],
    { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n'))
      if (line.trim() !== '') output.push(`${name}: ${line.slice(0, 400)}`);
    output.splice(0, Math.max(0, output.length - 60));
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  child.once('exit', (code, signal) => output.push(`${name}: exited (${code ?? signal})`));
  return child;
}

describe('kill -9 of the worker mid-stream', () => {
  const h = new WorkerHarness();
  const receiver = new Receiver();
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    await h.setup();
    await receiver.start();
  });

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await h.teardown();
    await receiver.stop();
  });

  it('loses no delivery and bills no attempt twice', async () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    await h.putWebhook('wh_kill', `${receiver.url}/kill`, [secret], 'active', 'acc_kill');
    receiver.delay('/kill', 200);
    const jobs = [];
    for (let i = 0; i < 60; i += 1)
      jobs.push(await h.publishJob('wh_kill', { accountId: 'acc_kill' }));
    const env = h.env({
      LOG_LEVEL: 'info',
      USAGE_FLUSH_MS: '200',
      DELIVERY_RECHECK_MAX_MS: '1000',
    });
    const first = startWorker(env, 'first');
    children.push(first);
    await until(() => receiver.at('/kill').length >= 15, 60_000);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    // Killed mid-stream: requests were in flight (10 per endpoint) and events were left.
    const atKill = new Set(receiver.at('/kill').map((r) => r.headers['webhook-id'])).size;
    expect(atKill).toBeLessThan(jobs.length);
    const second = startWorker(env, 'second');
    children.push(second);

    // Every event reaches the receiver (a retry after the kill may deliver one twice: receivers
    // de-duplicate on webhook-id), and every job ends with a successful attempt.
    await until(async () => {
      const rows: { n: string }[] = await h.dataSource.query(
        `SELECT count(DISTINCT job_id) AS n FROM deliveries.attempts WHERE outcome = 'success'`,
      );
      return Number(rows[0]!.n) === jobs.length;
    }, 90_000).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await diagnosis(h, jobs.length)}`);
    });
    const ids = new Set(receiver.at('/kill').map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(jobs.length);

    // CU on the BILLING stream = 25 x attempt rows billed, once each.
    const [{ billed }] = (await h.dataSource.query(
      `SELECT count(*)::int AS billed FROM deliveries.attempts WHERE billed`,
    )) as { billed: number }[];
    await until(async () => (await h.billedCu('acc_kill')) === billed * 25, 30_000);
    const [{ dup }] = (await h.dataSource.query(
      `SELECT count(*)::int AS dup FROM (SELECT job_id, attempt FROM deliveries.attempts GROUP BY 1, 2 HAVING count(*) > 1) d`,
    )) as { dup: number }[];
    expect(dup).toBe(0);
    second.kill('SIGTERM');
    await new Promise((resolve) => second.once('exit', resolve));
  });
});

/**
 * Where the jobs stand when the wait runs out (a CI flake is read from this, not guessed): the
 * latest attempt of each job by outcome, the consumer's counts, and the workers' last lines.
 */
async function diagnosis(h: WorkerHarness, jobCount: number): Promise<string> {
  const latest: { outcome: string | null; error_class: string | null; n: number }[] =
    await h.dataSource.query(
      `SELECT outcome, error_class, count(*)::int AS n FROM (
         SELECT DISTINCT ON (job_id) outcome, error_class FROM deliveries.attempts
         ORDER BY job_id, attempt DESC) l GROUP BY 1, 2`,
    );
  const consumer = await h.jobsConsumerInfo();
  return [
    `${jobCount} jobs; latest attempts: ${JSON.stringify(latest)}`,
    `consumer: ${JSON.stringify(consumer)}`,
    ...output,
  ].join('\n');
}
