import { DomainError } from '@meridian/errors';
import { windowRetryAfterMs, type WindowRule } from '@meridian/rate-limits';

/**
 * How many test deliveries (`POST /webhooks/{id}/test`) go out (ADR 0431 amendment "Test
 * deliveries: free, and limited"). They stay free and are sent at zero balance (spec), so a
 * count is all that stops an account pointing the delivery worker at a host of its choosing and
 * growing the delivery log: a few a minute per webhook (enough to try an endpoint while fixing
 * it), and a ceiling per account an hour so many webhooks do not multiply it.
 */
export const TEST_DELIVERY_LIMITS = {
  webhook: { limit: 10, windowMs: 60_000 },
  account: { limit: 100, windowMs: 3_600_000 },
} as const satisfies Record<string, WindowRule>;

export type TestDeliveryScope = keyof typeof TEST_DELIVERY_LIMITS;

/** The longest window: rows older than this decide nothing and are deleted. */
export const TEST_DELIVERY_KEEP_MS = Math.max(
  ...Object.values(TEST_DELIVERY_LIMITS).map((rule) => rule.windowMs),
);

/**
 * The refusal for the sends in the windows (each scope's, newest first, at most its limit), or
 * undefined when one more may go. The longest wait wins: both limits must have room.
 */
export function testDeliveryRefusal(
  sent: Record<TestDeliveryScope, readonly Date[]>,
  now: Date,
): DomainError | undefined {
  let worst: { scope: TestDeliveryScope; waitMs: number } | undefined;
  for (const scope of Object.keys(TEST_DELIVERY_LIMITS) as TestDeliveryScope[]) {
    const waitMs = windowRetryAfterMs(sent[scope], now, TEST_DELIVERY_LIMITS[scope]);
    if (waitMs > 0 && (!worst || waitMs > worst.waitMs)) worst = { scope, waitMs };
  }
  if (!worst) return undefined;
  const { limit, windowMs } = TEST_DELIVERY_LIMITS[worst.scope];
  const per = worst.scope === 'webhook' ? 'this webhook' : 'this account';
  return new DomainError(
    'rate_limited',
    'rate_limited',
    `too many test deliveries: ${limit} per ${windowMs / 60_000} min for ${per}; ` +
      `try again in ${Math.ceil(worst.waitMs / 1000)} s`,
    {
      details: {
        retryAfterMs: worst.waitMs,
        scope: worst.scope,
        limit,
        window_seconds: windowMs / 1000,
      },
    },
  );
}
