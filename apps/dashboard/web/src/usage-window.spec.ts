import { noUsageYetWords, usageRangeWords, usageWindow } from './usage-window';

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** Billing's snapping of a usage range (`from` down, `to` up, to whole hours). */
const snapped = (w: { from: Date; to: Date }) => ({
  from: Math.floor(w.from.getTime() / HOUR) * HOUR,
  to: Math.ceil(w.to.getTime() / HOUR) * HOUR,
});

describe('usageWindow: "Last N days" covers the whole trailing period', () => {
  it('the 7-day view at 05:48 (QA NN): from 05:00 seven days before to 06:00', () => {
    const now = Date.parse('2026-12-02T05:48:00Z');
    const w = usageWindow(7, now);
    expect(w.from.toISOString()).toBe('2026-11-25T05:00:00.000Z');
    expect(w.to.toISOString()).toBe('2026-12-02T06:00:00.000Z');
  });

  it.each([1, 7, 30])(
    '%i days, at any minute of an hour: whole hours, now − N days to now held',
    (days) => {
      for (const at of [
        '2026-12-02T05:00:00.000Z',
        '2026-12-02T05:00:00.001Z',
        '2026-12-02T05:59:59.999Z',
      ]) {
        const now = Date.parse(at);
        const w = usageWindow(days, now);
        const counted = snapped(w);
        // Billing counts what is sent: nothing is snapped away.
        expect(counted).toEqual({ from: w.from.getTime(), to: w.to.getTime() });
        expect(counted.from).toBeLessThanOrEqual(now - days * DAY);
        expect(counted.to).toBeGreaterThan(now);
        // No more than the period's two part hours beyond it.
        expect(counted.to - counted.from).toBeLessThanOrEqual(days * DAY + 2 * HOUR);
      }
    },
  );
});

describe('usageRangeWords', () => {
  it('says the range an answer covers in UTC', () => {
    expect(usageRangeWords('2026-11-25T05:00:00.000Z', '2026-12-02T06:00:00.000Z')).toBe(
      '2026-11-25 05:00 to 2026-12-02 06:00 UTC',
    );
  });
});

describe('noUsageYetWords (QA L9)', () => {
  it("says the customer's own tokens to the customer, the account's to the operator", () => {
    expect(noUsageYetWords('customer')).toMatch(/^Calls through your access tokens/);
    expect(noUsageYetWords('operator')).toMatch(/^Calls through this account's access tokens/);
    expect(noUsageYetWords('operator')).not.toMatch(/\byour\b/);
  });
});
