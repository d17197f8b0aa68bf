import { httpAnswerOf } from '@meridian/platform-http';
import { FakeClockTimers as ClockTimers, gate, settle } from '@meridian/platform-db/testing';
import { Registry } from 'prom-client';
import type { DataSource, EntityManager } from 'typeorm';
import { AccountWrites } from './account-writes';

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
