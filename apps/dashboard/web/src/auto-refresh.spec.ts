import {
  AutoRefresher,
  every,
  FAILED_LOAD_MIN_GAP_MS,
  failedLoadBackoff,
  pendingTopUpDelay,
  type NextDelay,
  type RefreshEnvironment,
} from './auto-refresh';

/** Jest's fake timers as the page's clock; visibility and focus moved by the test. */
function fakePage() {
  let visible = true;
  let listener: ((event: 'visible' | 'hidden' | 'focus') => void) | undefined;
  const env: RefreshEnvironment = {
    now: () => Date.now(),
    setTimeout: (run, ms) => setTimeout(run, ms),
    clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
    visible: () => visible,
    listen: (changed) => {
      listener = changed;
      return () => (listener = undefined);
    },
    random: () => 0.5, // no jitter
  };
  return {
    env,
    hide: () => {
      visible = false;
      listener?.('hidden');
    },
    show: () => {
      visible = true;
      listener?.('visible');
    },
    focus: () => listener?.('focus'),
    listening: () => listener !== undefined,
  };
}

const T0 = Date.parse('2026-11-30T10:00:00.000Z');

describe('AutoRefresher (useAutoRefresh)', () => {
  beforeEach(() => {
    jest.useFakeTimers();
    jest.setSystemTime(T0);
  });
  afterEach(() => jest.useRealTimers());

  /** Advances the fake clock, letting each refresh's promise settle. */
  const advance = async (ms: number) => {
    await jest.advanceTimersByTimeAsync(ms);
  };

  const started = (policy: NextDelay, page = fakePage()) => {
    const times: number[] = [];
    const refresher = new AutoRefresher(
      page.env,
      () => {
        times.push(Date.now() - T0);
        return Promise.resolve();
      },
      policy,
    );
    refresher.start();
    return { page, times, refresher };
  };

  it('asks again while the view is open, at its period', async () => {
    const { times } = started(every(15_000));
    await advance(46_000);
    expect(times).toEqual([15_000, 30_000, 45_000]);
  });

  it('sends nothing while the tab is hidden, and refreshes at once when it is shown', async () => {
    const { page, times } = started(every(15_000));
    await advance(15_000);
    page.hide();
    await advance(120_000);
    expect(times).toEqual([15_000]);
    page.show();
    await advance(0);
    expect(times).toEqual([15_000, 135_000]);
    await advance(15_000);
    expect(times).toEqual([15_000, 135_000, 150_000]);
  });

  it('refreshes on window focus, not twice within 2 s (focus and visibility together)', async () => {
    const { page, times } = started(() => null);
    await advance(10_000);
    expect(times).toEqual([]);
    page.focus();
    page.show();
    await advance(1_000);
    page.focus();
    await advance(0);
    expect(times).toEqual([10_000]);
    await advance(5_000);
    page.focus();
    await advance(0);
    expect(times).toEqual([10_000, 16_000]);
  });

  it('never overlaps a slow refresh: the next waits for its answer', async () => {
    const page = fakePage();
    const times: number[] = [];
    const refresher = new AutoRefresher(
      page.env,
      () => {
        times.push(Date.now() - T0);
        return new Promise((done) => setTimeout(done, 20_000));
      },
      every(5_000),
    );
    refresher.start();
    await advance(5_000);
    page.focus(); // more than 2 s later, while the first is in flight
    await advance(7_000);
    expect(times).toEqual([5_000]);
    await advance(18_000); // answered at 25 s, the next 5 s later
    expect(times).toEqual([5_000, 30_000]);
  });

  it('stops with the page: no timer, no listener', async () => {
    const { page, times, refresher } = started(every(1_000));
    refresher.stop();
    expect(page.listening()).toBe(false);
    await advance(10_000);
    expect(times).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('pending top-ups: asked just after the first clears, then with backoff until cleared', async () => {
    let clearsAt = [new Date(T0 + 90_000).toISOString(), new Date(T0 + 100_000).toISOString()];
    const page = fakePage();
    const times: number[] = [];
    const refresher = new AutoRefresher(
      page.env,
      () => {
        times.push(Date.now() - T0);
        return Promise.resolve();
      },
      (now) => pendingTopUpDelay(clearsAt)?.(now) ?? null,
    );
    refresher.start();
    // At most 30 s apart before it is due, then at its time.
    await advance(92_000);
    expect(times).toEqual([30_000, 60_000, 90_000, 92_000]);
    // Still pending (the server's clock behind the page's): waits as long as it is overdue.
    await advance(60_000);
    expect(times.slice(4)).toEqual([94_000, 98_000, 106_000, 122_000, 152_000]);
    await advance(60_000);
    expect(times.slice(9)).toEqual([182_000, 212_000]);
    // Cleared: no more asking.
    clearsAt = [];
    refresher.reschedule();
    await advance(300_000);
    expect(times).toHaveLength(11);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('pending top-ups: none pending, no schedule; a short wait is at least 2 s', () => {
    expect(pendingTopUpDelay([])).toBeNull();
    const soon = pendingTopUpDelay([new Date(T0 + 100).toISOString()])!;
    expect(soon(T0)).toBe(2_000);
    expect(soon(T0 + 3_600_000)).toBe(30_000);
  });

  it('a failed load is asked again on its own with backoff, and on focus at most every 20 s (QA: stayed failed)', async () => {
    const page = fakePage();
    const times: number[] = [];
    const refresher = new AutoRefresher(
      page.env,
      () => {
        times.push(Date.now() - T0);
        return Promise.resolve();
      },
      failedLoadBackoff(),
      FAILED_LOAD_MIN_GAP_MS,
    );
    refresher.start();
    await advance(200_000);
    expect(times).toEqual([10_000, 30_000, 70_000, 130_000, 190_000]);
    // A focus 10 s after the last ask waits for the schedule; 20 s after, it asks at once.
    page.focus();
    await advance(0);
    expect(times).toHaveLength(5);
    await advance(10_000);
    page.focus();
    await advance(0);
    expect(times).toEqual([10_000, 30_000, 70_000, 130_000, 190_000, 210_000]);
    // The page recovered (the error state unmounts): nothing more is asked.
    refresher.stop();
    await advance(300_000);
    expect(times).toHaveLength(6);
  });

  it('jitter spreads tabs opened together by at most ±10 %', async () => {
    const page = fakePage();
    page.env.random = () => 0;
    const times: number[] = [];
    const refresher = new AutoRefresher(
      page.env,
      () => {
        times.push(Date.now() - T0);
        return Promise.resolve();
      },
      every(10_000),
    );
    refresher.start();
    await advance(10_000);
    expect(times).toEqual([9_000]);
  });
});
