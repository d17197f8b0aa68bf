import { DomainError } from '@meridian/errors';
import { windowRetryAfterMs, type WindowRule } from '@meridian/rate-limits';

/**
 * How many test deliveries (`POST /webhooks/{id}/test`) go out (ADR 0431 amendment "Test
 * deliveries: free, and limited"). They stay free and are sent at zero balance (spec), so a
 * count is all that stops an account pointing the delivery worker at a host of its choosing and
 * growing the delivery log: a few a minute per webhook (enough to try an endpoint while fixing
 * it), and a ceiling per account an hour so many webhooks do not multiply it. The windows are
 * fixed; the counts are operator settings (`TEST_DELIVERY_WEBHOOK_PER_MINUTE`, 10, and
 * `TEST_DELIVERY_ACCOUNT_PER_HOUR`, 100, in the config schema).
 */
export type TestDeliveryScope = 'webhook' | 'account';
export type TestDeliveryLimits = Record<TestDeliveryScope, WindowRule>;

/** The settings' defaults (the config schema's): 10 a minute per webhook, 100 an hour per account. */
export const DEFAULT_TEST_DELIVERY_LIMITS = {
  TEST_DELIVERY_WEBHOOK_PER_MINUTE: 10,
  TEST_DELIVERY_ACCOUNT_PER_HOUR: 100,
} as const;

/** The limits the settings give: per webhook a minute, per account an hour. */
export function testDeliveryLimits(config: {
  TEST_DELIVERY_WEBHOOK_PER_MINUTE: number;
  TEST_DELIVERY_ACCOUNT_PER_HOUR: number;
}): TestDeliveryLimits {
  return {
    webhook: { limit: config.TEST_DELIVERY_WEBHOOK_PER_MINUTE, windowMs: 60_000 },
    account: { limit: config.TEST_DELIVERY_ACCOUNT_PER_HOUR, windowMs: 3_600_000 },
  };
}

/** The longest window: rows older than this decide nothing and are deleted. */
export function testDeliveryKeepMs(limits: TestDeliveryLimits): number {
  return Math.max(...Object.values(limits).map((rule) => rule.windowMs));
}

const SCOPES: readonly TestDeliveryScope[] = ['webhook', 'account'];

/** The 429's words in `/openapi.json`: the configured limits, the members it carries. */
export function testDeliveryLimitsDescription(limits: TestDeliveryLimits): string {
  return (
    `rate_limited: ${limits.webhook.limit} test deliveries a minute per webhook ` +
    `or ${limits.account.limit} an hour per account sent already ` +
    '(`scope`, `limit`, `window_seconds`); header Retry-After (s)'
  );
}

/**
 * The refusal for the sends in the windows (each scope's, newest first, at most its limit), or
 * undefined when one more may go. The longest wait wins: both limits must have room.
 */
export function testDeliveryRefusal(
  limits: TestDeliveryLimits,
  sent: Record<TestDeliveryScope, readonly Date[]>,
  now: Date,
): DomainError | undefined {
  let worst: { scope: TestDeliveryScope; waitMs: number } | undefined;
  for (const scope of SCOPES) {
    const waitMs = windowRetryAfterMs(sent[scope], now, limits[scope]);
    if (waitMs > 0 && (!worst || waitMs > worst.waitMs)) worst = { scope, waitMs };
  }
  if (!worst) return undefined;
  const { limit, windowMs } = limits[worst.scope];
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
