import { signInThrottleKeys, signInWaitMs, type SignInLimits } from './login-throttle';

const windowMs = 15 * 60_000;
const limits: SignInLimits = {
  pair: { limit: 5, windowMs },
  account: { limit: 100, windowMs },
  address: { limit: 20, windowMs },
  knownMs: 30 * 24 * 3_600_000,
};
const now = new Date('2026-03-02T08:00:00.000Z');
const failures = (n: number) => Array.from({ length: n }, () => new Date(now.getTime() - 60_000));
const none = { pair: [], account: [], address: [] };

describe('signInWaitMs', () => {
  it.each([
    ['nothing failed', none, false, 0],
    ['five from elsewhere do not lock the pair (QA)', { ...none, account: failures(5) }, false, 0],
    ["the pair's fifth failure locks it", { ...none, pair: failures(5) }, false, windowMs - 60_000],
    ['a known pair is locked by its own failures', { ...none, pair: failures(5) }, true, 840_000],
    [
      'the account ceiling: guessing from many addresses',
      { ...none, account: failures(100) },
      false,
      840_000,
    ],
    [
      'the account ceiling does not hold a known pair',
      { ...none, account: failures(100) },
      true,
      0,
    ],
    [
      'the address limit: one address, many emails',
      { ...none, address: failures(20) },
      false,
      840_000,
    ],
    ['the address limit does not hold a known pair', { ...none, address: failures(20) }, true, 0],
    [
      'under every limit',
      { pair: failures(4), account: failures(99), address: failures(19) },
      false,
      0,
    ],
  ])('%s', (_name, given, known, expected) => {
    expect(signInWaitMs(given, known, now, limits)).toBe(expected);
  });
});

describe('signInThrottleKeys', () => {
  it('keys the pair by the email in lower case and the address', () => {
    expect(signInThrottleKeys('Alice@Corp.Example', '192.0.2.1')).toEqual({
      pair: 'email:alice@corp.example:ip:192.0.2.1',
      account: 'email:alice@corp.example',
      address: 'ip:192.0.2.1',
      known: 'known:alice@corp.example:ip:192.0.2.1',
    });
  });
});
