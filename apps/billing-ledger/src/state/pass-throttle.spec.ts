import { PassThrottle } from './pass-throttle';

describe('PassThrottle (balance-state usage passes, ADR 0104)', () => {
  let now = 0;
  let passes: number[];
  let throttle: PassThrottle;

  beforeEach(() => {
    jest.useFakeTimers();
    now = 10_000;
    passes = [];
    throttle = new PassThrottle(
      1_000,
      () => passes.push(now),
      () => now,
    );
  });
  afterEach(() => {
    throttle.cancel();
    jest.useRealTimers();
  });

  const advance = (ms: number) => {
    now += ms;
    jest.advanceTimersByTime(ms);
  };

  it('runs the first request after a quiet interval at once, not after the interval', () => {
    throttle.request();
    expect(passes).toEqual([10_000]);
    advance(1_500);
    throttle.request();
    expect(passes).toEqual([10_000, 11_500]);
  });

  it('folds the requests within an interval into one pass at its end', () => {
    throttle.request();
    advance(200);
    throttle.request();
    advance(300);
    throttle.request();
    throttle.request();
    expect(passes).toEqual([10_000]);
    advance(499);
    expect(passes).toEqual([10_000]);
    advance(1);
    expect(passes).toEqual([10_000, 11_000]);
    // The next interval starts at that pass.
    advance(100);
    throttle.request();
    advance(899);
    expect(passes).toEqual([10_000, 11_000]);
    advance(1);
    expect(passes).toEqual([10_000, 11_000, 12_000]);
  });

  it('runs at once when asked (a flip), folding in the waiting pass', () => {
    throttle.request();
    advance(100);
    throttle.request();
    throttle.runNow();
    expect(passes).toEqual([10_000, 10_100]);
    advance(5_000);
    expect(passes).toEqual([10_000, 10_100]);
  });

  it('runs nothing after cancel', () => {
    throttle.request();
    advance(10);
    throttle.request();
    throttle.cancel();
    advance(5_000);
    expect(passes).toEqual([10_000]);
  });
});
