import { EventsBudget } from './events-budget';

/** Block times, unix seconds. */
const T0 = Date.parse('2026-01-01T00:00:00Z') / 1000;
const admitted = (results: boolean[]) => results.filter(Boolean).length;

describe('EventsBudget', () => {
  const limit = { ratePerSecond: 2, burst: 24 };

  it('admits the burst at once, then the rate, and drops the rest', () => {
    const budget = new EventsBudget();
    const first = Array.from({ length: 30 }, () => budget.admit('acc_1', limit, T0));
    expect(admitted(first)).toBe(24);
    expect(budget.admit('acc_2', limit, T0)).toBe(true);
    const second = Array.from({ length: 5 }, () => budget.admit('acc_1', limit, T0 + 1));
    expect(admitted(second)).toBe(2);
  });

  it('drops everything for an account without an events budget', () => {
    const budget = new EventsBudget();
    expect(budget.admit('acc_1', { ratePerSecond: 0, burst: 0 }, T0)).toBe(false);
  });

  it('a backlog at chain pace is admitted whole, however late and fast it is matched', () => {
    // QA's repro: Premium (50/s, burst 600), 45 events a second for 50 s of blocks, all of
    // them matched in one go after a restart. No matcher clock is read: none can drop them.
    const budget = new EventsBudget();
    const premium = { ratePerSecond: 50, burst: 600 };
    const results: boolean[] = [];
    for (let s = 0; s < 50; s++)
      for (let i = 0; i < 45; i++) results.push(budget.admit('acc_1', premium, T0 + s));
    expect(admitted(results)).toBe(2_250);
  });

  it('exactly at the rate for longer than the burst lasts: nothing dropped', () => {
    const budget = new EventsBudget();
    const results: boolean[] = [];
    for (let s = 0; s < 100; s++)
      for (let i = 0; i < 2; i++) results.push(budget.admit('acc_1', limit, T0 + s));
    expect(admitted(results)).toBe(200);
  });

  it('a dense block over the burst: the burst passes, the rest of the block is dropped', () => {
    const budget = new EventsBudget();
    const block = Array.from({ length: 40 }, () => budget.admit('acc_1', limit, T0));
    expect(admitted(block)).toBe(24);
    // The next block 3 s later has refilled 6 tokens, no more.
    const next = Array.from({ length: 10 }, () => budget.admit('acc_1', limit, T0 + 3));
    expect(admitted(next)).toBe(6);
  });

  it('blocks of one timestamp share no refill, and an older block time never refills', () => {
    const budget = new EventsBudget();
    const tight = { ratePerSecond: 1, burst: 2 };
    // Three blocks stamped with one second (sub-second blocks): two tokens in all.
    expect([0, 1, 2].map(() => budget.admit('acc_1', tight, T0 + 10))).toEqual([true, true, false]);
    // A lagging network's block from 5 s earlier: the bucket's clock does not go back.
    expect(budget.admit('acc_1', tight, T0 + 5)).toBe(false);
    // Nor does it refill twice when the chain moves on: one second after T0 + 10, one token.
    expect([0, 1].map(() => budget.admit('acc_1', tight, T0 + 11))).toEqual([true, false]);
  });

  it('one budget for all the account webhooks and networks, ordered by the greatest block time', () => {
    const budget = new EventsBudget();
    const tight = { ratePerSecond: 1, burst: 2 };
    // Network E live at T0 + 60 spends the bucket; network P's backlog from T0 + 30 finds it
    // empty and refills nothing of its own (ADR 0421 amendment: one network lagging).
    expect(budget.admit('acc_1', tight, T0 + 60)).toBe(true);
    expect(budget.admit('acc_1', tight, T0 + 60)).toBe(true);
    expect(budget.admit('acc_1', tight, T0 + 30)).toBe(false);
    expect(budget.admit('acc_1', tight, T0 + 61)).toBe(true);
  });

  it('forgets buckets full again by the greatest block time seen', () => {
    const budget = new EventsBudget();
    for (let i = 0; i < 24; i++) budget.admit('acc_1', limit, T0);
    budget.sweep();
    expect(budget.admit('acc_1', limit, T0)).toBe(false);
    budget.admit('acc_2', limit, T0 + 12);
    budget.sweep();
    // Forgotten and started again full: the same answer a bucket idle for 12 s gives.
    expect(admitted(Array.from({ length: 30 }, () => budget.admit('acc_1', limit, T0 + 12)))).toBe(
      24,
    );
  });
});
