import { ProcessGroup, restartDelayMs, type ProcessGroupTimers } from './process-group';

/** Timers driven by the test: nothing waits for a real backoff. */
class ManualTimers implements ProcessGroupTimers {
  time = 0;
  private readonly due: Array<{ at: number; fn: () => void; handle: number }> = [];
  private next = 1;
  now = () => this.time;
  setTimeout = (fn: () => void, ms: number) => {
    const handle = this.next++;
    this.due.push({ at: this.time + ms, fn, handle });
    return handle;
  };
  clearTimeout = (handle: unknown) => {
    const i = this.due.findIndex((d) => d.handle === handle);
    if (i >= 0) this.due.splice(i, 1);
  };
  /** Advances to the next timer and runs it; returns the delay it had. */
  fireNext(): number {
    this.due.sort((a, b) => a.at - b.at);
    const next = this.due.shift();
    if (!next) throw new Error('no timer pending');
    const delay = next.at - this.time;
    this.time = next.at;
    next.fn();
    return delay;
  }
  get pending(): number {
    return this.due.length;
  }
}

/** Polls for a child process to have started or exited (real processes take real time). */
const until = async (check: () => boolean) => {
  const deadline = Date.now() + 15_000;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error('condition not reached');
};

describe('restartDelayMs', () => {
  it.each([
    [1, 1_000],
    [2, 2_000],
    [3, 4_000],
    [5, 16_000],
    [6, 30_000],
    [40, 30_000],
  ])('crash %d in a row → %d ms', (crashes, delay) => {
    expect(restartDelayMs(crashes)).toBe(delay);
  });
});

// Each test spawns real node processes, one after another: on a loaded 2-core machine each
// start took over a second, and three in a row overran jest's default 5 s.
jest.setTimeout(30_000);

describe('ProcessGroup restarts a process that dies, like a cluster restarts a pod', () => {
  it('restarts with growing backoff, logs each restart, and stop() ends it for good', async () => {
    const timers = new ManualTimers();
    const lines: string[] = [];
    const crashes: Array<number | null> = [];
    const group = new ProcessGroup(
      (l) => lines.push(l),
      (_n, code) => crashes.push(code),
      timers,
    );
    const managed = group.start(
      'crashy',
      process.execPath,
      ['-e', 'process.exit(3)'],
      {},
      { restart: true },
    );

    await until(() => timers.pending === 1);
    expect(timers.fireNext()).toBe(1_000);
    expect(managed.restarts).toBe(1);
    await until(() => timers.pending === 1);
    expect(timers.fireNext()).toBe(2_000);
    expect(managed.restarts).toBe(2);
    await until(() => timers.pending === 1);
    expect(crashes).toEqual([3, 3, 3]);
    expect(lines.filter((l) => l.includes('restarting in'))).toEqual([
      expect.stringContaining('exited (code 3); restarting in 1000 ms (restart 1)'),
      expect.stringContaining('restarting in 2000 ms (restart 2)'),
      expect.stringContaining('restarting in 4000 ms (restart 3)'),
    ]);

    await group.stop(1_000);
    expect(timers.pending).toBe(0);
    await expect(managed.exited).resolves.toBe(3);
  });

  it('a process that ran a minute before dying starts the backoff again', async () => {
    const timers = new ManualTimers();
    const group = new ProcessGroup(() => undefined, undefined, timers);
    const managed = group.start(
      'flaky',
      process.execPath,
      ['-e', 'process.exit(1)'],
      {},
      { restart: true },
    );
    await until(() => timers.pending === 1);
    timers.fireNext();
    await until(() => managed.restarts === 1 && timers.pending === 0);
    timers.time += 61_000; // the restarted child "ran" a minute before it died
    await until(() => timers.pending === 1);
    expect(timers.fireNext()).toBe(1_000);
    await group.stop(1_000);
  });

  it('kill -9 of a running child: get(name) shows the new pid and the restart, logged with the signal', async () => {
    const timers = new ManualTimers();
    const lines: string[] = [];
    const group = new ProcessGroup((l) => lines.push(l), undefined, timers);
    group.start(
      'sleeper',
      process.execPath,
      ['-e', 'setInterval(() => {}, 1000)'],
      {},
      {
        restart: true,
      },
    );
    const first = group.get('sleeper')!.child.pid!;
    process.kill(first, 'SIGKILL');
    await until(() => timers.pending === 1);
    expect(lines).toContainEqual(
      expect.stringContaining(
        '[sleeper] exited (signal SIGKILL); restarting in 1000 ms (restart 1)',
      ),
    );
    timers.fireNext();
    const managed = group.get('sleeper')!;
    expect(managed.restarts).toBe(1);
    expect(managed.child.pid).toEqual(expect.any(Number));
    expect(managed.child.pid).not.toBe(first);
    expect(group.get('nobody')).toBeUndefined();
    await group.stop(1_000);
  });

  it('restart(name) ends a process started without a restart policy and starts it again at once, not reported as a death', async () => {
    const lines: string[] = [];
    const deaths: string[] = [];
    const group = new ProcessGroup(
      (l) => lines.push(l),
      (n) => deaths.push(n),
    );
    group.start('broker', process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    const first = group.get('broker')!.child.pid;
    const managed = await group.restart('broker', 'SIGKILL');
    expect(managed.restarts).toBe(1);
    expect(managed.child.pid).not.toBe(first);
    expect(lines).toContainEqual(
      expect.stringContaining(
        '[broker] exited (signal SIGKILL); restarting now, as asked (restart 1)',
      ),
    );
    expect(deaths).toEqual([]);
    await expect(group.restart('nobody')).rejects.toThrow('no process nobody');
    await group.stop(1_000);
    await expect(managed.exited).resolves.toBeNull();
  });

  it('restart(name, signal, { downMs }) keeps the process down that long before starting it again', async () => {
    const timers = new ManualTimers();
    const lines: string[] = [];
    const group = new ProcessGroup(
      (l) => lines.push(l),
      () => undefined,
      timers,
    );
    const managed = group.start('node', process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    const first = managed.child;
    const restarted = group.restart('node', 'SIGKILL', { downMs: 5_000 });
    await until(() => timers.pending === 1);
    // Down: the old child is gone and no new one is started until the outage has lasted.
    expect(first.signalCode).toBe('SIGKILL');
    expect(managed.child).toBe(first);
    expect(lines).toContainEqual(
      expect.stringContaining(
        '[node] exited (signal SIGKILL); restarting in 5000 ms, as asked (restart 1)',
      ),
    );
    expect(timers.fireNext()).toBe(5_000);
    await expect(restarted).resolves.toBe(managed);
    expect(managed.child).not.toBe(first);
    expect(managed.restarts).toBe(1);
    await group.stop(1_000);
  });

  it('without restart (the default) a death is only reported, in one line naming its code', async () => {
    const timers = new ManualTimers();
    const crashes: string[] = [];
    const lines: string[] = [];
    const group = new ProcessGroup(
      (l) => lines.push(l),
      (name) => crashes.push(name),
      timers,
    );
    const managed = group.start('once', process.execPath, ['-e', 'process.exit(2)']);
    await expect(managed.exited).resolves.toBe(2);
    expect(crashes).toEqual(['once']);
    expect(lines).toEqual(['[once] exited unexpectedly (code 2); not restarted']);
    expect(timers.pending).toBe(0);
  });
});
