import { DomainError } from '@meridian/errors';
import { DAY, HOUR, MINUTE, type Clock } from '@meridian/time';
import { PLANS } from './plan.table';
import type { PlanId } from './plan.types';

/** Daily top-up moment of the Free allowance (spec: 07:30 UTC), as an offset from midnight UTC. */
export const DAILY_RESET_OFFSET_MS = 7 * HOUR + 30 * MINUTE;

/** Half-open interval [start, end). */
export interface AllowanceWindow {
  readonly start: Date;
  readonly end: Date;
}

const toDate = (now: Date | Clock): Date => (now instanceof Date ? now : now.now());

/** The daily window (07:30 UTC to 07:30 UTC) holding `now`; also the audit quota's day. */
export function dailyWindow(now: Date | Clock): AllowanceWindow {
  const at = toDate(now).getTime();
  const start = Math.floor((at - DAILY_RESET_OFFSET_MS) / DAY) * DAY + DAILY_RESET_OFFSET_MS;
  return { start: new Date(start), end: new Date(start + DAY) };
}

/**
 * `anchor` moved by `months` calendar months in UTC, keeping its time of day. Days past the end
 * of a shorter month clamp to its last day, always measured from the anchor (Jan 31 → Feb 28 →
 * Mar 31), so one short month does not shift every later renewal.
 */
export function addMonthsUtc(anchor: Date, months: number): Date {
  const year = anchor.getUTCFullYear();
  const month = anchor.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(
    Date.UTC(
      year,
      month,
      Math.min(anchor.getUTCDate(), lastDay),
      anchor.getUTCHours(),
      anchor.getUTCMinutes(),
      anchor.getUTCSeconds(),
      anchor.getUTCMilliseconds(),
    ),
  );
}

/** The monthly window holding `now`, counting whole months from the renewal anchor (either side). */
export function monthlyWindow(now: Date | Clock, renewalAnchor: Date): AllowanceWindow {
  const at = toDate(now).getTime();
  const estimate =
    (toDate(now).getUTCFullYear() - renewalAnchor.getUTCFullYear()) * 12 +
    (toDate(now).getUTCMonth() - renewalAnchor.getUTCMonth());
  // The calendar-month estimate is off by at most one; step until start ≤ now < end.
  let k = estimate + 1;
  while (addMonthsUtc(renewalAnchor, k).getTime() > at) k -= 1;
  return { start: addMonthsUtc(renewalAnchor, k), end: addMonthsUtc(renewalAnchor, k + 1) };
}

/**
 * The allowance period holding `now`: Free resets daily at 07:30 UTC (renewal anchor ignored);
 * paid plans reset monthly at the renewal anchor's day and time of day.
 */
export function currentAllowanceWindow(
  plan: PlanId,
  now: Date | Clock,
  renewalAnchor?: Date,
): AllowanceWindow {
  if (PLANS[plan].allowance.period === 'day') return dailyWindow(now);
  if (renewalAnchor === undefined || Number.isNaN(renewalAnchor.getTime())) {
    throw new DomainError(
      'renewal_anchor_required',
      'invalid',
      `plan ${plan} renews monthly and needs a renewal anchor`,
    );
  }
  return monthlyWindow(now, renewalAnchor);
}
