import {
  exhaustedNotice,
  exhaustedPageNotice,
  resumeAtZeroMessage,
  type ExhaustedBalance,
} from './balance-words';

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

describe('resumeAtZeroMessage (QA: on Free it named only a top-up, not the 07:30 UTC reset)', () => {
  const head =
    'Your CU balance is zero, so this webhook cannot resume: deliveries cost 25 CU each. Top up and resume it again; a top-up that is still clearing is enough once it is more than any overdraft.';
  it('names the daily reset on Free, the renewal on a paid plan, nothing it does not know', () => {
    expect(resumeAtZeroMessage(exhausted, 'free')).toBe(
      `${head} Resume also works once your daily allowance resets on 2026-12-01 07:30 UTC.`,
    );
    expect(
      resumeAtZeroMessage(
        { ...exhausted, allowance_resets_at: '2026-12-15T00:00:00.000Z' },
        'starter',
      ),
    ).toBe(`${head} Resume also works once your plan renews on 2026-12-15 00:00 UTC.`);
    expect(resumeAtZeroMessage(null, 'free')).toBe(head);
  });
});

describe('exhaustedPageNotice (QA: Webhooks and Node access said "Active" at zero balance)', () => {
  it('says what stops and what ends it', () => {
    expect(exhaustedPageNotice(exhausted, 'free')).toBe(
      'Your CU balance is exhausted: webhooks keep their status but deliver nothing, and node calls are refused, until a top-up clears or your daily allowance resets on 2026-12-01 07:30 UTC.',
    );
  });
});
