import { DomainError } from '@meridian/errors';
import { httpAnswerOf } from './domain-error.filter';

describe('httpAnswerOf', () => {
  it('a dependency out of reach is 503 with Retry-After: 1', () => {
    const answer = httpAnswerOf(
      new DomainError('credentials_unavailable', 'unavailable', 'credentials cannot be checked'),
    );
    expect(answer).toEqual({
      status: 503,
      body: { error: 'credentials_unavailable', message: 'credentials cannot be checked' },
      headers: { 'Retry-After': '1' },
    });
  });

  it('a refusal that says when to come back keeps its own Retry-After; others have none', () => {
    const limited = new DomainError('rate_limited', 'rate_limited', 'slow down', {
      details: { retryAfterMs: 2_500 },
    });
    expect(httpAnswerOf(limited).headers).toEqual({ 'Retry-After': '3' });
    expect(httpAnswerOf(limited).body).not.toHaveProperty('retryAfterMs');
    expect(httpAnswerOf(new DomainError('not_found', 'not_found')).headers).toEqual({});
  });
});
