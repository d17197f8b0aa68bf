import { FakeClockTimers, gate, settle } from '@meridian/platform-db/testing';
import { httpAnswerOf } from '@meridian/platform-http';
import { Registry } from 'prom-client';
import { AccountWrites } from './account-writes';

describe('AccountWrites (billing-ledger)', () => {
  const series = async (registry: Registry) =>
    (await registry.metrics())
      .split('\n')
      .filter((line) => line.startsWith('billing_account_writes_'));

  it('one write of an account at a time, other accounts beside it; past the bound 503 database_unavailable, on /metrics', async () => {
    const timers = new FakeClockTimers();
    const registry = new Registry();
    const writes = new AccountWrites(
      { DATABASE_ACQUIRE_TIMEOUT_MS: 10_000 },
      registry,
      timers.timer,
    );
    const held = gate();
    const first = writes.run('acc_a', held.work);
    const queued = gate();
    const second = writes.run('acc_a', queued.work);
    const late = writes.run('acc_a', () => Promise.resolve('late')).catch((e: unknown) => e);
    const other = writes.run('acc_b', () => Promise.resolve('other'));
    await settle();
    await expect(other).resolves.toBe('other');
    expect([held.state.started, queued.state.started]).toEqual([true, false]);
    expect(writes.waiting('acc_a')).toBe(2);
    expect(await series(registry)).toEqual([
      'billing_account_writes_waiting{lane="account"} 2',
      'billing_account_writes_refused_total{lane="account"} 0',
    ]);
    // The first write finishes at 6 s: the second runs; the third waits out its 10 s.
    await timers.advance(6_000);
    held.state.finish();
    await first;
    await settle();
    expect(queued.state.started).toBe(true);
    await timers.advance(4_000);
    expect(httpAnswerOf(await late)).toEqual({
      status: 503,
      body: {
        error: 'database_unavailable',
        message: "this account's other writes kept it waiting 10000 ms; retry later",
      },
      headers: { 'Retry-After': '2' },
    });
    queued.state.finish();
    await second;
    expect(await series(registry)).toEqual([
      'billing_account_writes_waiting{lane="account"} 0',
      'billing_account_writes_refused_total{lane="account"} 1',
    ]);
  });
});
