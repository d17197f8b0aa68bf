import { DbJobGate } from './db-job-gate';

describe('DbJobGate', () => {
  afterEach(() => jest.useRealTimers());

  it('is closed until the DataSource is initialized; skips work meanwhile', async () => {
    const dataSource = { isInitialized: false };
    const gate = DbJobGate.of(dataSource);
    expect(DbJobGate.of(dataSource)).toBe(gate);
    const work = jest.fn(async () => 'ran');
    expect(await gate.run(work)).toBeUndefined();
    expect(work).not.toHaveBeenCalled();
    dataSource.isInitialized = true;
    expect(await gate.run(work)).toBe('ran');
  });

  it('whenOpen settles when DbModule reports the connection, or at the next look otherwise', async () => {
    jest.useFakeTimers();
    const reported = { isInitialized: false };
    const first = jest.fn();
    void DbJobGate.of(reported).whenOpen().then(first);
    await Promise.resolve();
    expect(first).not.toHaveBeenCalled();
    reported.isInitialized = true;
    DbJobGate.of(reported).connected();
    await Promise.resolve();
    expect(first).toHaveBeenCalled();

    const elsewhere = { isInitialized: false };
    const second = jest.fn();
    void DbJobGate.of(elsewhere).whenOpen().then(second);
    jest.advanceTimersByTime(5_000);
    await Promise.resolve();
    expect(second).not.toHaveBeenCalled();
    elsewhere.isInitialized = true;
    jest.advanceTimersByTime(1_000);
    await Promise.resolve();
    expect(second).toHaveBeenCalled();
  });

  const refused = () =>
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

  /** A connected DataSource whose `SELECT 1` is refused until `up`. */
  function postgres() {
    const state = { up: false };
    const dataSource = {
      isInitialized: true,
      query: jest.fn(async () => {
        if (!state.up) throw refused();
        return [{ '?column?': 1 }];
      }),
    };
    return { state, dataSource };
  }

  it('a lost connection: closed once a probe fails too, logged once, open again when a probe is answered', async () => {
    jest.useFakeTimers();
    const { state, dataSource } = postgres();
    const log = { lost: jest.fn(), restored: jest.fn() };
    const gate = DbJobGate.of(dataSource).configure({ log, probeBackoffMs: [100, 1_000] });

    // A failure of the statement's own is no outage, and costs no probe.
    expect(await gate.outage(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(
      false,
    );
    expect(dataSource.query).not.toHaveBeenCalled();

    // Every handler failing at once shares one probe.
    expect(await Promise.all([gate.outage(refused()), gate.outage(refused())])).toEqual([
      true,
      true,
    ]);
    expect(dataSource.query).toHaveBeenCalledTimes(1);
    expect(gate.open).toBe(false);
    const work = jest.fn(async () => 'ran');
    expect(await gate.run(work)).toBeUndefined();
    expect(work).not.toHaveBeenCalled();
    expect(await gate.outage(refused())).toBe(true);
    expect(dataSource.query).toHaveBeenCalledTimes(1);

    const reopened = jest.fn();
    void gate.whenOpen().then(reopened);
    await jest.advanceTimersByTimeAsync(100 + 1_000 + 1_000);
    expect(dataSource.query).toHaveBeenCalledTimes(4);
    expect(reopened).not.toHaveBeenCalled();
    expect(log.lost).toHaveBeenCalledTimes(1);
    expect(log.restored).not.toHaveBeenCalled();

    state.up = true;
    await jest.advanceTimersByTimeAsync(1_000);
    expect(reopened).toHaveBeenCalled();
    expect(gate.open).toBe(true);
    expect(log.restored).toHaveBeenCalledTimes(1);
    expect(log.restored).toHaveBeenCalledWith(
      3_100,
      expect.objectContaining({ code: 'ECONNREFUSED' }),
    );
    expect(await gate.run(work)).toBe('ran');
    gate.stop();
  });

  it("an unreachable error while a probe is answered was the statement's own (a reset connection): stays open", async () => {
    const { state, dataSource } = postgres();
    state.up = true;
    const log = { lost: jest.fn(), restored: jest.fn() };
    const gate = DbJobGate.of(dataSource).configure({ log });
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(await gate.outage(reset)).toBe(false);
    expect(gate.open).toBe(true);
    expect(log.lost).not.toHaveBeenCalled();
  });

  it('a probe that hangs fails after its timeout', async () => {
    jest.useFakeTimers();
    const dataSource = { isInitialized: true, query: jest.fn(() => new Promise<never>(() => {})) };
    const gate = DbJobGate.of(dataSource).configure({
      probeTimeoutMs: 2_000,
      probeBackoffMs: [60_000],
    });
    const verdict = gate.outage(Object.assign(new Error('x'), { code: 'ETIMEDOUT' }));
    await jest.advanceTimersByTimeAsync(2_000);
    expect(await verdict).toBe(true);
    expect(gate.open).toBe(false);
    gate.stop();
  });

  it("run: a job's outage failure closes the gate, swallowed; skipped while closed; runs again when open", async () => {
    jest.useFakeTimers();
    const { state, dataSource } = postgres();
    const log = { lost: jest.fn(), restored: jest.fn() };
    const gate = DbJobGate.of(dataSource).configure({ log, probeBackoffMs: [100, 1_000] });
    const pass = jest.fn(async () => {
      if (!state.up) throw refused();
      return 'ran';
    });
    expect(await gate.run(pass)).toBeUndefined();
    expect(gate.open).toBe(false);
    expect(log.lost).toHaveBeenCalledTimes(1);
    for (let tick = 0; tick < 5; tick++) expect(await gate.run(pass)).toBeUndefined();
    expect(pass).toHaveBeenCalledTimes(1);

    // A failure of the job's own is thrown to it, the gate stays as it was.
    state.up = true;
    await jest.advanceTimersByTimeAsync(100);
    expect(gate.open).toBe(true);
    expect(log.restored).toHaveBeenCalledTimes(1);
    expect(log.lost).toHaveBeenCalledTimes(1);
    await expect(
      gate.run(async () => {
        throw Object.assign(new Error('duplicate key'), { code: '23505' });
      }),
    ).rejects.toThrow('duplicate key');
    expect(await gate.run(pass)).toBe('ran');
    expect(await gate.failed(new Error('not ours'))).toBe(false);
  });

  it('runOnce: a one-shot job failing for an outage runs again when Postgres answers', async () => {
    jest.useFakeTimers();
    const { state, dataSource } = postgres();
    const log = { lost: jest.fn(), restored: jest.fn() };
    const gate = DbJobGate.of(dataSource).configure({ log, probeBackoffMs: [100] });
    const job = jest.fn(async () => {
      if (!state.up) throw refused();
      return 'counted';
    });
    const done = gate.runOnce(job);
    await jest.advanceTimersByTimeAsync(500);
    expect(job).toHaveBeenCalledTimes(1);
    expect(log.lost).toHaveBeenCalledTimes(1);
    state.up = true;
    await jest.advanceTimersByTimeAsync(100);
    await expect(done).resolves.toBe('counted');
    expect(job).toHaveBeenCalledTimes(2);
    await expect(
      gate.runOnce(async () => {
        throw new Error('its own');
      }),
    ).rejects.toThrow('its own');
  });
});
