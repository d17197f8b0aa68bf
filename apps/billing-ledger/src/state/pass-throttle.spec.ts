import { FakeClockTimers } from '@meridian/platform-db/testing';
import { PassThrottle } from './pass-throttle';

describe('PassThrottle (balance-state usage passes, ADR 0104)', () => {
  let timers: FakeClockTimers;
  let start: number;
  /** When each pass ran, in ms since the case began. */
  let passes: number[];
  let throttle: PassThrottle;

  beforeEach(() => {
    timers = new FakeClockTimers();
    start = timers.clock.now().getTime();
    passes = [];
    throttle = new PassThrottle(1_000, () => passes.push(timers.clock.now().getTime() - start), {
      now: () => timers.clock.now().getTime(),
      timer: timers.timer,
    });
  });
  afterEach(() => throttle.cancel());

  const advance = (ms: number) => timers.advance(ms);

  it('runs the first request after a quiet interval at once, not after the interval', async () => {
    throttle.request();
    expect(passes).toEqual([0]);
    expect(timers.armed).toBe(0);
    await advance(1_500);
    throttle.request();
    expect(passes).toEqual([0, 1_500]);
  });

  it('folds the requests within an interval into one pass at its end', async () => {
    throttle.request();
    await advance(200);
    throttle.request();
    await advance(300);
    throttle.request();
    throttle.request();
    expect(passes).toEqual([0]);
    expect(timers.armed).toBe(1);
    await advance(499);
    expect(passes).toEqual([0]);
    await advance(1);
    expect(passes).toEqual([0, 1_000]);
    // The next interval starts at that pass.
    await advance(100);
    throttle.request();
    await advance(899);
    expect(passes).toEqual([0, 1_000]);
    await advance(1);
    expect(passes).toEqual([0, 1_000, 2_000]);
  });

  it('runs at once when asked (a flip), folding in the waiting pass', async () => {
    throttle.request();
    await advance(100);
    throttle.request();
    // The interval's timer is held: only runNow can run this pass before it ends.
    throttle.runNow();
    expect(passes).toEqual([0, 100]);
    expect(timers.armed).toBe(0);
    await advance(5_000);
    expect(passes).toEqual([0, 100]);
  });

  it('runs nothing after cancel', async () => {
    throttle.request();
    await advance(10);
    throttle.request();
    throttle.cancel();
    expect(timers.armed).toBe(0);
    await advance(5_000);
    expect(passes).toEqual([0]);
  });

  it("runs on the process's timers by default", () => {
    jest.useFakeTimers();
    try {
      const own = new PassThrottle(1_000, () => passes.push(-1));
      own.request();
      own.request();
      expect(jest.getTimerCount()).toBe(1);
      jest.advanceTimersByTime(1_000);
      expect(passes).toEqual([-1, -1]);
    } finally {
      jest.useRealTimers();
    }
  });
});
