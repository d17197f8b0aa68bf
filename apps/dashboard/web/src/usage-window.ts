const HOUR = 3_600_000;
const DAY = 86_400_000;

/**
 * The range of the Overview's "Last N days" at `now` (ms): from the start of the hour holding
 * `now` − N days to the start of the hour after `now`. Billing counts usage by whole hours (it
 * snaps `from` down and `to` up), so this is the smallest range it counts that holds the whole
 * trailing period. It sent `to = now + 1 h`, `from = to − N days`: the 7-day view at 05:48 began
 * at 06:00 seven days before, and the 48 minutes of the period's first hour were left out (QA NN).
 */
export function usageWindow(days: number, now: number): { from: Date; to: Date } {
  return {
    from: new Date(Math.floor((now - days * DAY) / HOUR) * HOUR),
    to: new Date(Math.floor(now / HOUR) * HOUR + HOUR),
  };
}

/** The range a usage answer covers, in UTC to the minute: what the page's caption says. */
export function usageRangeWords(from: string, to: string): string {
  const minute = (iso: string) => new Date(iso).toISOString().slice(0, 16).replace('T', ' ');
  return `${minute(from)} to ${minute(to)} UTC`;
}

/**
 * The empty usage chart's hint, worded for who looks (QA L9): the operator reads a customer's
 * account, whose calls are not "yours".
 */
export function noUsageYetWords(viewer: 'customer' | 'operator'): string {
  const whose = viewer === 'customer' ? 'your' : "this account's";
  return `Calls through ${whose} access tokens and webhook deliveries appear here within a few seconds.`;
}
