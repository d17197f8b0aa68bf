import { FakeClockTimers as ClockTimers, gate, settle } from './fake-clock-timers';
import { KeyedQueue, KeyWaitTimeout } from './keyed-queue';

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
