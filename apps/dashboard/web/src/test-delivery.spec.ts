import { testDeliveryOutcome, testDeliveryRefusal } from './test-delivery';

const attempt = (fields: Partial<Parameters<typeof testDeliveryOutcome>[0][number]>) => ({
  outcome: 'failure',
  final: true,
  status_code: null,
  duration_ms: null,
  error_class: null,
  error: null,
  response_body: null,
  ...fields,
});

describe('testDeliveryOutcome', () => {
  it('is pending until an attempt is listed, and while one is retried', () => {
    expect(testDeliveryOutcome([])).toEqual({ state: 'pending' });
    expect(testDeliveryOutcome([attempt({ final: false, status_code: 500 })])).toEqual({
      state: 'pending',
    });
  });

  it('a success is delivered with the status and the time taken', () => {
    expect(
      testDeliveryOutcome([
        attempt({ outcome: 'success', status_code: 204, duration_ms: 1234, response_body: '' }),
      ]),
    ).toEqual({
      state: 'delivered',
      text: 'delivered: your endpoint answered HTTP 204 in 1,234 ms',
    });
  });

  it('a refusal names the status and the start of the answer', () => {
    expect(
      testDeliveryOutcome([
        attempt({
          status_code: 500,
          duration_ms: 3,
          error_class: 'http_status',
          error: 'HTTP 500',
          response_body: ` ${'x'.repeat(120)} `,
        }),
      ]),
    ).toEqual({
      state: 'failed',
      text: `failed: your endpoint answered HTTP 500 in 3 ms: “${'x'.repeat(100)}…”`,
    });
  });

  it('no answer: the error, else its class', () => {
    expect(
      testDeliveryOutcome([attempt({ error_class: 'connection', error: 'connection refused' })]),
    ).toEqual({ state: 'failed', text: 'failed: connection refused' });
    expect(
      testDeliveryOutcome([
        attempt({ outcome: 'skipped_breaker_open', error_class: 'breaker_open' }),
      ]),
    ).toEqual({ state: 'failed', text: 'failed: breaker_open' });
  });
});

describe('testDeliveryRefusal', () => {
  it("words the 429 of a webhook's and of an account's limit", () => {
    expect(
      testDeliveryRefusal('rate_limited', { scope: 'webhook', limit: 10, window_seconds: 60 }),
    ).toBe(
      'Not sent: this webhook has sent its 10 test deliveries for a minute. Test deliveries ' +
        'are free and limited; send the next one a little later.',
    );
    expect(
      testDeliveryRefusal('rate_limited', { scope: 'account', limit: 100, window_seconds: 3600 }),
    ).toMatch(/^Not sent: your account has sent its 100 test deliveries for an hour\./);
    expect(
      testDeliveryRefusal('rate_limited', { scope: 'webhook', limit: 1, window_seconds: 60 }),
    ).toMatch(/^Not sent: this webhook has sent its 1 test delivery for a minute\./);
  });

  it("says when the next one may go, from the answer's Retry-After", () => {
    expect(
      testDeliveryRefusal('rate_limited', { scope: 'webhook', limit: 10, window_seconds: 60 }, 42),
    ).toBe(
      'Not sent: this webhook has sent its 10 test deliveries for a minute. Test deliveries ' +
        'are free and limited; send the next one in 42 s.',
    );
  });

  it('words a 429 without its members, and leaves other codes to the page', () => {
    expect(testDeliveryRefusal('rate_limited', {})).toMatch(
      /^Not sent: this webhook has sent as many/,
    );
    expect(testDeliveryRefusal('webhook_not_active', {})).toBeUndefined();
  });
});
