/**
 * What the page says of an API briefly out of reach (QA: a 503 read as a generic error): its
 * database restarting or failing over (`database_unavailable`), billing-ledger not answering a
 * key or plan check. Those 503s carry Retry-After and pass in seconds; the other 503s keep their
 * own words (a timeout names the API that hung, a key the ring lacks is not brief).
 */
const BRIEF_OUTAGES = new Set([
  'database_unavailable',
  'credentials_unavailable',
  'billing_unavailable',
  'usage_unavailable',
]);

/** A 503 that passes in seconds (the codes above). */
export const isBriefOutage = (status: number, code: string): boolean =>
  status === 503 && BRIEF_OUTAGES.has(code);

/** The message an ApiError shows: the API's own, or the brief-outage wording for those 503s. */
export function pageMessageOf(status: number, code: string, message: string): string {
  if (!isBriefOutage(status, code)) return message;
  return 'The service is briefly unavailable; try again in a few seconds.';
}
