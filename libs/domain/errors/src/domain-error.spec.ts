import { DomainError, httpStatusOf, MAX_QUOTED_INPUT, quoteInput } from './domain-error';

describe('DomainError', () => {
  it.each([
    ['unavailable', true],
    ['rate_limited', true],
    ['invalid', false],
    ['unimplemented', false],
  ] as const)('kind %s is retryable: %s (unless told)', (kind, retryable) => {
    expect(new DomainError('x', kind).retryable).toBe(retryable);
    expect(new DomainError('x', kind, 'm', { retryable: !retryable }).retryable).toBe(!retryable);
  });

  it('unimplemented answers 501 on REST edges', () => {
    expect(httpStatusOf.unimplemented).toBe(501);
  });
});

describe('quoteInput', () => {
  it('quotes short input as JSON', () => {
    expect(quoteInput('latest"x')).toBe('"latest\\"x"');
    expect(quoteInput(12)).toBe('"12"');
  });

  it('cuts long input to a bounded message, saying how long it was', () => {
    const quoted = quoteInput('x'.repeat(3_000_000));
    expect(quoted.length).toBeLessThan(MAX_QUOTED_INPUT + 40);
    expect(quoted).toContain('(3000000 characters)');
  });
});
