import { httpAnswerOf } from '@meridian/platform-http';
import { TEST_DELIVERY_LIMITS, testDeliveryRefusal } from './test-delivery-limits';

const now = new Date('2026-12-01T12:00:00.000Z');
const ago = (ms: number) => new Date(now.getTime() - ms);
const times = (n: number, everyMs: number, startAgoMs: number) =>
  Array.from({ length: n }, (_, i) => ago(startAgoMs - i * everyMs));

describe('testDeliveryRefusal', () => {
  const { webhook, account } = TEST_DELIVERY_LIMITS;

  it('lets a test go while both windows have room', () => {
    expect(
      testDeliveryRefusal({ webhook: times(webhook.limit - 1, 1_000, 30_000), account: [] }, now),
    ).toBeUndefined();
  });

  it("refuses the webhook's next test until its oldest leaves the minute: 429, Retry-After", () => {
    const sent = times(webhook.limit, 1_000, 30_000); // 30 s … 21 s ago
    const refusal = testDeliveryRefusal({ webhook: sent, account: sent }, now)!;
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
      { webhook: [], account: times(account.limit, 30_000, 3_000_000) },
      now,
    )!;
    const answer = httpAnswerOf(refusal);
    expect(answer.body).toMatchObject({ scope: 'account', limit: account.limit });
    expect(answer.headers['Retry-After']).toBe(String(3_600 - 3_000));
  });

  it('the longer wait wins when both are reached', () => {
    const refusal = testDeliveryRefusal(
      { webhook: times(webhook.limit, 1_000, 59_000), account: times(account.limit, 1, 600_000) },
      now,
    )!;
    expect(refusal.details).toMatchObject({ scope: 'account', retryAfterMs: 3_000_000 });
  });
});
