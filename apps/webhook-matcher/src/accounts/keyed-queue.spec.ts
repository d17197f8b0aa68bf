import { httpAnswerOf } from '@meridian/platform-http';
import { FakeClock } from '@meridian/time';
import { Registry } from 'prom-client';
import type { DataSource, EntityManager } from 'typeorm';
import { AccountWrites } from './account-writes';
import { KeyedQueue, KeyWaitTimeout, type WaitTimer } from './keyed-queue';

/** Timers on a FakeClock: `advance` fires those due, in order; nothing sleeps. */
class ClockTimers {
  readonly clock = new FakeClock();
  private pending: Array<{ at: number; fire: () => void }> = [];

  readonly timer: WaitTimer = (ms, onTimeout) => {
    const entry = { at: this.clock.now().getTime() + ms, fire: onTimeout };
    this.pending.push(entry);
    return () => {
      this.pending = this.pending.filter((p) => p !== entry);
    };
  };

  async advance(ms: number): Promise<void> {
    const now = this.clock.advance(ms).getTime();
    const due = this.pending.filter((p) => p.at <= now).sort((a, b) => a.at - b.at);
    this.pending = this.pending.filter((p) => p.at > now);
    for (const p of due) p.fire();
    await settle();
  }

  get armed(): number {
    return this.pending.length;
  }
}

/** Lets every promise callback queued so far run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Work that runs until `finish` is called; `started` says whether it began. */
function gate() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const state = { started: false, finish };
  const work = async () => {
    state.started = true;
    await done;
  };
  return { state, work };
}

describe('KeyedQueue', () => {
  it('runs one work of a key at a time, in arrival order; other keys side by side', async () => {
    const timers = new ClockTimers();
    const queue = new KeyedQueue(timers.timer);
    const [a1, a2, a3, b1] = [gate(), gate(), gate(), gate()];
    const runs = [
      queue.run('a', 1_000, a1.work),
      queue.run('a', 1_000, a2.work),
      queue.run('a', 1_000, a3.work),
      queue.run('b', 1_000, b1.work),
    ];
    await settle();
    expect([a1, a2, a3, b1].map((g) => g.state.started)).toEqual([true, false, false, true]);
    expect(queue.waiting('a')).toBe(2);
    a1.state.finish();
    await settle();
    expect([a2.state.started, a3.state.started]).toEqual([true, false]);
    a2.state.finish();
    a3.state.finish();
    b1.state.finish();
    await Promise.all(runs);
    expect(a3.state.started).toBe(true);
    expect(queue.busy('a') || queue.busy('b')).toBe(false);
    expect(timers.armed).toBe(0);
  });

  it('a waiter gives up at its bound without running; the ones behind it keep their place', async () => {
    const timers = new ClockTimers();
    const queue = new KeyedQueue(timers.timer);
    const first = gate();
    const early = gate();
    const late = gate();
    const running = queue.run('a', 1_000, first.work);
    await settle();
    const earlyRun = queue.run('a', 1_000, early.work);
    await timers.advance(400);
    const lateRun = queue.run('a', 1_000, late.work);
    const outcome = earlyRun.then(
      () => 'ran',
      (error: unknown) => error,
    );
    await timers.advance(599);
    expect(queue.waiting('a')).toBe(2);
    await timers.advance(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(KeyWaitTimeout);
    expect(error).toMatchObject({ key: 'a', waitedMs: 1_000 });
    expect(early.state.started).toBe(false);
    expect(queue.waiting('a')).toBe(1);
    // The late waiter, granted before its own bound, runs; its timer is cancelled.
    first.state.finish();
    await running;
    await settle();
    expect(late.state.started).toBe(true);
    expect(timers.armed).toBe(0);
    late.state.finish();
    await lateRun;
    expect(queue.busy('a')).toBe(false);
  });

  it('a failing work hands the key on', async () => {
    const queue = new KeyedQueue(new ClockTimers().timer);
    const failed = queue.run('a', 1_000, () => Promise.reject(new Error('boom')));
    const next = queue.run('a', 1_000, () => Promise.resolve('next'));
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('next');
    expect(queue.busy('a')).toBe(false);
  });
});

describe('AccountWrites', () => {
  const manager = {} as EntityManager;

  function writes(timers: ClockTimers, registry = new Registry()) {
    const transactions: string[] = [];
    const dataSource = {
      transaction: (work: (m: EntityManager) => Promise<unknown>) => {
        transactions.push('tx');
        return work(manager);
      },
    } as unknown as DataSource;
    return {
      transactions,
      writes: new AccountWrites(
        dataSource,
        { DATABASE_ACQUIRE_TIMEOUT_MS: 3_000 },
        registry,
        timers.timer,
      ),
    };
  }

  it('a write that waited the acquire timeout is 503 database_unavailable, Retry-After 2, and opened no transaction', async () => {
    const timers = new ClockTimers();
    const { writes: w, transactions } = writes(timers);
    const holder = gate();
    const held = w.transaction('acc', holder.work);
    await settle();
    const queued = w.transaction('acc', () => Promise.resolve('late')).catch((e: unknown) => e);
    await timers.advance(2_999);
    expect(w.waiting('acc')).toBe(1);
    await timers.advance(1);
    const answer = httpAnswerOf(await queued);
    expect(answer).toEqual({
      status: 503,
      body: {
        error: 'database_unavailable',
        message: "this account's other writes kept it waiting 3000 ms; retry later",
      },
      headers: { 'Retry-After': '2' },
    });
    expect(transactions).toHaveLength(1);
    holder.state.finish();
    await held;
  });

  it("test deliveries have their own turn: a queued test never waits for the account's writes", async () => {
    const timers = new ClockTimers();
    const { writes: w } = writes(timers);
    const write = gate();
    const test = gate();
    const held = w.transaction('acc', write.work);
    const sent = w.testDelivery('acc', test.work);
    await settle();
    expect([write.state.started, test.state.started]).toEqual([true, true]);
    write.state.finish();
    test.state.finish();
    await Promise.all([held, sent]);
  });

  it('/metrics: writes waiting now over every account, and those refused after their bound', async () => {
    const timers = new ClockTimers();
    const registry = new Registry();
    const { writes: w } = writes(timers, registry);
    const series = async () =>
      (await registry.metrics())
        .split('\n')
        .filter((line) => line.startsWith('webhook_matcher_account_writes_'));
    const a = gate();
    const b = gate();
    const heldA = w.transaction('acc_a', a.work);
    const heldB = w.transaction('acc_b', b.work);
    await settle();
    const queued = [
      w.transaction('acc_a', () => Promise.resolve('a2')),
      w.transaction('acc_a', () => Promise.resolve('a3')),
      w.transaction('acc_b', () => Promise.resolve('b2')),
    ].map((p) => p.catch((e: unknown) => e));
    expect(await series()).toEqual([
      'webhook_matcher_account_writes_waiting{lane="account"} 3',
      'webhook_matcher_account_writes_waiting{lane="test_delivery"} 0',
      'webhook_matcher_account_writes_refused_total{lane="account"} 0',
      'webhook_matcher_account_writes_refused_total{lane="test_delivery"} 0',
    ]);
    // acc_b's write finishes: its waiter runs; acc_a's two wait out their 3 s and are refused.
    b.state.finish();
    await heldB;
    await expect(queued[2]).resolves.toBe('b2');
    expect(await series()).toContain('webhook_matcher_account_writes_waiting{lane="account"} 2');
    await timers.advance(3_000);
    expect(httpAnswerOf(await queued[0]).status).toBe(503);
    expect(httpAnswerOf(await queued[1]).status).toBe(503);
    expect(await series()).toEqual([
      'webhook_matcher_account_writes_waiting{lane="account"} 0',
      'webhook_matcher_account_writes_waiting{lane="test_delivery"} 0',
      'webhook_matcher_account_writes_refused_total{lane="account"} 2',
      'webhook_matcher_account_writes_refused_total{lane="test_delivery"} 0',
    ]);
    a.state.finish();
    await heldA;
  });
});
