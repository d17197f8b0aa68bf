import { exhaustedNotice, type ExhaustedBalance } from './balance-words';

const exhausted: ExhaustedBalance = {
  allowance_resets_at: '2026-12-01T07:30:00.000Z',
  overdraft_cu: 0,
};

describe('exhaustedNotice (QA: the red badge alone did not say what stops)', () => {
  it.each([
    [
      'Free: the daily reset',
      exhausted,
      'free',
      'Node calls and webhook deliveries are stopped until a top-up clears or your daily allowance resets on 2026-12-01 07:30 UTC.',
    ],
    [
      'a paid plan: its renewal',
      { ...exhausted, allowance_resets_at: '2026-12-15T00:00:00.000Z' },
      'starter',
      'Node calls and webhook deliveries are stopped until a top-up clears or your plan renews on 2026-12-15 00:00 UTC.',
    ],
    [
      'an overdraft: the top-up pays it first',
      { ...exhausted, overdraft_cu: 970_000 },
      'free',
      'Node calls and webhook deliveries are stopped until a top-up of more than 970,000 CU (the overdraft is paid first) clears or your daily allowance resets on 2026-12-01 07:30 UTC.',
    ],
    [
      'no plan: no reset to wait for',
      { ...exhausted, allowance_resets_at: null },
      null,
      'Node calls and webhook deliveries are stopped until a top-up clears.',
    ],
  ])('%s', (_, balance, plan, words) => {
    expect(exhaustedNotice(balance, plan)).toBe(words);
  });
});
