import { DbJobGate } from '@meridian/platform-db';
import { ChangePoller } from './chain-blocks.consumer';
import type { MatchingEngine } from './matching.engine';

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

/**
 * The poller's log across a Postgres outage (QA: 2,106 'change feed poll failed' lines with a
 * stack each in nine minutes). The engine's read stands for the change-feed query.
 */
describe('ChangePoller', () => {
  function world() {
    const postgres = { up: false, failWith: refused as () => Error };
    const dataSource = {
      isInitialized: true,
      query: async () => {
        if (!postgres.up) throw refused();
        return [];
      },
    };
    const outageLog = { lost: jest.fn(), restored: jest.fn() };
    const gate = DbJobGate.of(dataSource).configure({ log: outageLog, probeBackoffMs: [1] });
    const synced = jest.fn(async () => {
      if (!postgres.up) throw postgres.failWith();
    });
    const log = { warn: jest.fn(), info: jest.fn() };
    const poller = new ChangePoller(
      { syncChanges: synced } as unknown as MatchingEngine,
      gate,
      log,
    );
    return { postgres, gate, synced, log, outageLog, poller };
  }

  it('an outage: no line of its own and no query while the gate is closed; the gate logs it once', async () => {
    const { postgres, gate, synced, log, outageLog, poller } = world();
    await poller.poll();
    expect(gate.open).toBe(false);
    for (let i = 0; i < 100; i += 1) await poller.poll();
    expect(synced).toHaveBeenCalledTimes(1);
    expect(log.warn).not.toHaveBeenCalled();
    expect(outageLog.lost).toHaveBeenCalledTimes(1);

    postgres.up = true;
    await gate.whenOpen();
    await poller.poll();
    expect(synced).toHaveBeenCalledTimes(2);
    expect(outageLog.restored).toHaveBeenCalledTimes(1);
    expect(log.warn).not.toHaveBeenCalled();
    gate.stop();
  });

  it('another failure: one warning without its stack until a poll works again', async () => {
    const { postgres, synced, log, poller } = world();
    postgres.failWith = () => new TypeError("Cannot read properties of undefined (reading 'id')");
    synced.mockImplementation(async () => {
      throw postgres.failWith();
    });
    for (let i = 0; i < 10; i += 1) await poller.poll();
    expect(log.warn).toHaveBeenCalledTimes(1);
    expect(log.warn).toHaveBeenCalledWith(
      { err: "Cannot read properties of undefined (reading 'id')" },
      'change feed poll failed; retrying every poll',
    );
    synced.mockImplementation(async () => undefined);
    await poller.poll();
    expect(log.info).toHaveBeenCalledWith({}, 'change feed poll works again');
  });
});
