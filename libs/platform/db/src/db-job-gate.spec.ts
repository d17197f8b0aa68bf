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
});
