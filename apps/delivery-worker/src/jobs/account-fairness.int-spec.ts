import { randomBytes } from 'node:crypto';
import {
  Receiver,
  TEST_JOBS_CONSUMER,
  WorkerHarness,
  stillFalse,
  until,
} from '../testing/worker-harness';

const secret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** The consumer's slots and the account cap, small for the test (production: 256 and 64). */
const SLOTS = 4;
const ACCOUNT_CAP = 2;
/**
 * Account A's receivers answer 200, each only after this (slow but successful): long beside what
 * B's deliveries take, so the order of arrival tells the cap apart (no bound in ms below).
 */
const SLOW_MS = 6_000;
const A_URLS = 6;

/**
 * QA noisy neighbour (High): tenant A's 50 slow-but-200 URLs (10 in flight each, never tripping
 * the breaker) took all 256 slots and B's webhooks waited minutes. Here A has 6 slow URLs on a
 * worker of 4 slots: without the per-account cap A's jobs hold every slot for SLOW_MS and B's
 * wait behind them; with ACCOUNT_MAX_IN_FLIGHT=2 A holds 2 and the rest of its jobs wait
 * (`account_busy`, put back, unbilled), so B's go at once. Real NATS, Postgres, HTTP receivers.
 */
describe('delivery-worker: one account’s slow URLs do not delay another account (account cap)', () => {
  const h = new WorkerHarness({ ...TEST_JOBS_CONSUMER, concurrency: SLOTS });
  const receiver = new Receiver();

  beforeAll(async () => {
    await h.setup();
    await receiver.start();
    await h.start({ env: { ACCOUNT_MAX_IN_FLIGHT: String(ACCOUNT_CAP) } });
  });

  afterAll(async () => {
    await h.teardown();
    await receiver.stop();
  });

  it('B’s events are delivered promptly while A’s wait for its 2 slots; then all of A’s arrive, billed once', async () => {
    for (let i = 0; i < A_URLS; i += 1) {
      receiver.delay(`/a${i}`, SLOW_MS);
      await h.putWebhook(`wh_a${i}`, `${receiver.url}/a${i}`, [secret()], 'active', 'acc_a');
    }
    await h.putWebhook('wh_b', `${receiver.url}/b`, [secret()], 'active', 'acc_b');
    const fromA = () => receiver.received.filter((r) => r.path.startsWith('/a'));

    for (let i = 0; i < A_URLS; i += 1) await h.publishJob(`wh_a${i}`, { accountId: 'acc_a' });
    // A's first jobs are in flight (the receiver holds their answers) before B's are published.
    await until(() => fromA().length >= ACCOUNT_CAP);
    for (let i = 0; i < 3; i += 1) await h.publishJob('wh_b', { accountId: 'acc_b' });

    // Without the cap B waits behind A's 4 slow requests, and A's next ones go out beside B's once
    // an answer frees a slot; with it B's go at once. No bound in ms (one of 2 s failed on a
    // loaded CI): B's 3 all arrived before any of A's beyond its first 2.
    await until(() => receiver.at('/b').length === 3, 4 * SLOW_MS);
    expect(receiver.received.slice(0, ACCOUNT_CAP + 3).map((r) => r.path.slice(0, 2))).toEqual([
      ...Array<string>(ACCOUNT_CAP).fill('/a'),
      ...Array<string>(3).fill('/b'),
    ]);
    // A never had more than its 2 in flight: its first answers are not out yet.
    expect(fromA()).toHaveLength(ACCOUNT_CAP);
    await stillFalse(() => fromA().length > ACCOUNT_CAP, 300);

    // A's waits are counted under their own reason, and cost A nothing meanwhile.
    const metrics = await (await fetch(`${await h.app!.getUrl()}/metrics`)).text();
    expect(metrics).toMatch(/delivery_waits_total\{reason="account_busy"[^}]*\} [1-9]/);
    expect(await until(async () => (await h.billedCu('acc_b')) === 75 && 75)).toBe(75);
    // A is billed for its 2 attempts made (at the claim), none for its waits.
    expect(await until(async () => (await h.billedCu('acc_a')) === 50 && 50)).toBe(50);

    // Nothing of A's is lost: 2 at a time, each delivered once, 25 CU each.
    await until(() => fromA().length === A_URLS, 4 * SLOW_MS);
    expect(new Set(fromA().map((r) => r.path)).size).toBe(A_URLS);
    expect(
      await until(async () => (await h.billedCu('acc_a')) === 25 * A_URLS && 25 * A_URLS, 5_000),
    ).toBe(25 * A_URLS);
    // ... and each recorded a success once its slow answer came (no receiver left answering).
    await until(async () => {
      const rows: { outcome: string | null }[] = await h.dataSource.query(
        `SELECT outcome FROM deliveries.attempts WHERE account_id = 'acc_a'`,
      );
      return rows.length === A_URLS && rows.every((r) => r.outcome === 'success');
    }, 2 * SLOW_MS);
    expect(fromA()).toHaveLength(A_URLS);
  });
});
