/** What the outcome is read from: fields of the API's attempt (`DeliveryAttempt`). */
interface Attempt {
  outcome: string;
  final: boolean;
  status_code: number | null;
  duration_ms: number | null;
  error_class: string | null;
  error: string | null;
  response_body: string | null;
}

/** Where a test delivery stands, from its attempts (`…/deliveries?event_id=`, newest first). */
export type TestDeliveryOutcome =
  { state: 'pending' } | { state: 'delivered'; text: string } | { state: 'failed'; text: string };

/** The first characters of the endpoint's answer shown after a refusal. */
const SHOWN_ANSWER = 100;

/** `HTTP 500 in 12 ms`, or the error when no answer came (`connection refused`). */
function answerOf(a: Attempt): string {
  const took = a.duration_ms !== null ? ` in ${a.duration_ms.toLocaleString('en-US')} ms` : '';
  if (a.status_code !== null) return `your endpoint answered HTTP ${a.status_code}${took}`;
  return a.error ?? a.error_class ?? a.outcome.replace(/_/g, ' ');
}

/**
 * A test delivery is one attempt, never retried: none listed yet is pending; a success is
 * delivered, with the endpoint's status; any other final outcome failed, with the status and the
 * start of the answer, or the error when none came. A non-final attempt (a retry would follow)
 * leaves it pending.
 */
export function testDeliveryOutcome(attempts: readonly Attempt[]): TestDeliveryOutcome {
  const success = attempts.find((a) => a.outcome === 'success');
  if (success) return { state: 'delivered', text: `delivered: ${answerOf(success)}` };
  const last = attempts.find((a) => a.final);
  if (!last) return { state: 'pending' };
  const body = last.status_code !== null ? (last.response_body ?? '').trim() : '';
  const shown = body.length > SHOWN_ANSWER ? `${body.slice(0, SHOWN_ANSWER)}…` : body;
  return { state: 'failed', text: `failed: ${answerOf(last)}${shown ? `: “${shown}”` : ''}` };
}

/** `a minute`, `an hour`, else seconds: a limit's window as the page words it. */
function windowWords(seconds: number): string {
  if (seconds === 60) return 'a minute';
  if (seconds === 3_600) return 'an hour';
  return `${seconds.toLocaleString('en-US')} s`;
}

/**
 * The page's words for a test delivery refused for its limit (429 `rate_limited` with `scope`,
 * `limit`, `window_seconds`; webhook-matcher `testDeliveryLimits`, set by `TEST_DELIVERY_*`), else undefined: tests are
 * free, so a webhook gets a few a minute and the account a ceiling an hour. With the answer's
 * Retry-After (relayed by the BFF), it says when the next one may go.
 */
export function testDeliveryRefusal(
  code: string,
  body: Record<string, unknown>,
  retryAfterSeconds?: number,
): string | undefined {
  if (code !== 'rate_limited') return undefined;
  const whose = body['scope'] === 'account' ? 'your account' : 'this webhook';
  const limit = body['limit'];
  const seconds = body['window_seconds'];
  const sent =
    typeof limit === 'number' && typeof seconds === 'number'
      ? `has sent its ${limit.toLocaleString('en-US')} test ${limit === 1 ? 'delivery' : 'deliveries'} for ${windowWords(seconds)}`
      : 'has sent as many test deliveries as it may for now';
  const when =
    retryAfterSeconds === undefined
      ? 'a little later'
      : `in ${retryAfterSeconds.toLocaleString('en-US')} s`;
  return `Not sent: ${whose} ${sent}. Test deliveries are free and limited; send the next one ${when}.`;
}
