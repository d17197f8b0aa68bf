import { DomainError } from '@meridian/errors';
import { backoffDelay, outcomeOfError } from './handler-outcome';

const consumer = { maxDeliver: 5, backoffMs: [100, 1_000, 10_000] };

describe('backoffDelay', () => {
  it.each([
    [1, 100],
    [2, 1_000],
    [3, 10_000],
    [9, 10_000],
  ])('after delivery %i waits %i ms', (delivery, delay) => {
    expect(backoffDelay(consumer.backoffMs, delivery)).toBe(delay);
  });

  it('no backoff means redeliver at once', () => {
    expect(backoffDelay([], 3)).toBe(0);
  });
});

describe('outcomeOfError', () => {
  it.each([
    [
      'retryable DomainError',
      new DomainError('upstream_down', 'unavailable'),
      2,
      { action: 'nak', delayMs: 1_000 },
    ],
    [
      'unknown error (maybe transient)',
      new Error('ECONNRESET'),
      1,
      { action: 'nak', delayMs: 100 },
    ],
    [
      'retryAfterMs wins over the backoff',
      new DomainError('slow_down', 'rate_limited', 'x', { details: { retryAfterMs: 42 } }),
      1,
      { action: 'nak', delayMs: 42 },
    ],
    [
      'non-retryable DomainError',
      new DomainError('account_unknown', 'not_found'),
      1,
      {
        action: 'dead_letter',
        reason: 'permanent_error',
        code: 'account_unknown',
        message: 'account_unknown',
      },
    ],
    [
      'retryable on the last delivery',
      new DomainError('upstream_down', 'unavailable', 'down'),
      5,
      { action: 'dead_letter', reason: 'max_deliver', code: 'upstream_down', message: 'down' },
    ],
    [
      'a thrown string',
      'boom',
      5,
      { action: 'dead_letter', reason: 'max_deliver', code: 'unexpected_error', message: 'boom' },
    ],
  ])('%s', (_name, error, delivery, expected) => {
    expect(outcomeOfError(error, delivery, consumer)).toEqual(expected);
  });
});
