import { httpAnswerOf } from '@meridian/platform-http';
import {
  DEFAULT_TEST_DELIVERY_LIMITS,
  testDeliveryLimits,
  testDeliveryLimitsDescription,
  testDeliveryRefusal,
} from './test-delivery-limits';

const now = new Date('2026-12-01T12:00:00.000Z');
const ago = (ms: number) => new Date(now.getTime() - ms);
const times = (n: number, everyMs: number, startAgoMs: number) =>
  Array.from({ length: n }, (_, i) => ago(startAgoMs - i * everyMs));

describe('testDeliveryRefusal', () => {
  const limits = testDeliveryLimits(DEFAULT_TEST_DELIVERY_LIMITS);
  const { webhook, account } = limits;

  it('lets a test go while both windows have room', () => {
    expect(
      testDeliveryRefusal(
        limits,
        { webhook: times(webhook.limit - 1, 1_000, 30_000), account: [] },
        now,
      ),
    ).toBeUndefined();
  });

  it("refuses the webhook's next test until its oldest leaves the minute: 429, Retry-After", () => {
    const sent = times(webhook.limit, 1_000, 30_000); // 30 s … 21 s ago
    const refusal = testDeliveryRefusal(limits, { webhook: sent, account: sent }, now)!;
    const answer = httpAnswerOf(refusal);
    expect(answer.status).toBe(429);
    expect(answer.headers['Retry-After']).toBe('30');
    expect(answer.body).toMatchObject({
      error: 'rate_limited',
      scope: 'webhook',
      limit: webhook.limit,
      window_seconds: 60,
    });
  });

  it('refuses on the account ceiling however the sends spread over its webhooks', () => {
    const refusal = testDeliveryRefusal(
      limits,
      { webhook: [], account: times(account.limit, 30_000, 3_000_000) },
      now,
    )!;
    const answer = httpAnswerOf(refusal);
    expect(answer.body).toMatchObject({ scope: 'account', limit: account.limit });
    expect(answer.headers['Retry-After']).toBe(String(3_600 - 3_000));
  });

  it('the longer wait wins when both are reached', () => {
    const refusal = testDeliveryRefusal(
      limits,
      { webhook: times(webhook.limit, 1_000, 59_000), account: times(account.limit, 1, 600_000) },
      now,
    )!;
    expect(refusal.details).toMatchObject({ scope: 'account', retryAfterMs: 3_000_000 });
  });

  it('counts against the configured limits, and says them', () => {
    const tuned = testDeliveryLimits({
      TEST_DELIVERY_WEBHOOK_PER_MINUTE: 3,
      TEST_DELIVERY_ACCOUNT_PER_HOUR: 500,
    });
    const sent = times(3, 1_000, 30_000);
    expect(testDeliveryRefusal(limits, { webhook: sent, account: sent }, now)).toBeUndefined();
    const answer = httpAnswerOf(testDeliveryRefusal(tuned, { webhook: sent, account: sent }, now)!);
    expect(answer.body).toMatchObject({ scope: 'webhook', limit: 3, window_seconds: 60 });
    expect(answer.body['message']).toContain('3 per 1 min for this webhook');
    expect(testDeliveryLimitsDescription(tuned)).toMatch(
      /^rate_limited: 3 test deliveries a minute per webhook or 500 an hour per account/,
    );
  });
});
