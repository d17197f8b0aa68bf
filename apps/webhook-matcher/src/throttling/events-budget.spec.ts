import { FakeClock } from '@meridian/time';
import { EventsBudget } from './events-budget';

describe('EventsBudget', () => {
  const limit = { ratePerSecond: 2, burst: 24 };

  it('admits the burst at once, then the rate, and drops the rest', () => {
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
    const budget = new EventsBudget(clock);
    const first = Array.from({ length: 30 }, () => budget.admit('acc_1', limit));
    expect(first.filter(Boolean)).toHaveLength(24);
    expect(budget.admit('acc_2', limit)).toBe(true);
    clock.advance(1_000);
    const second = Array.from({ length: 5 }, () => budget.admit('acc_1', limit));
    expect(second.filter(Boolean)).toHaveLength(2);
  });

  it('drops everything for an account without an events budget', () => {
    const budget = new EventsBudget(new FakeClock());
    expect(budget.admit('acc_1', { ratePerSecond: 0, burst: 0 })).toBe(false);
  });
});
