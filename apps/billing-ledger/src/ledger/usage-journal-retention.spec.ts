import { parseConfig } from '@meridian/platform-config';
import { DAY } from '@meridian/time';
import fc from 'fast-check';
import { configSchema } from '../config/config';
import { dayOf, firstKeptDay, partitionSuffix } from './usage-journal-retention';

describe('usage journal days (ADR 0104 "Storage")', () => {
  it('names a day partition by its UTC date', () => {
    expect(partitionSuffix(dayOf(new Date('2026-11-28T23:59:59.999Z')))).toBe('p20261128');
    expect(partitionSuffix(dayOf(new Date('2026-11-29T00:00:00.000Z')))).toBe('p20261129');
  });

  it('keeps at least the retention: a retired day ends no later than retention days before now', () => {
    expect(firstKeptDay(new Date('2026-03-29T12:00:00.000Z'), 8)).toEqual(
      new Date('2026-03-21T00:00:00.000Z'),
    );
    expect(firstKeptDay(new Date('2026-03-29T12:00:00.000Z'), 0)).toBeNull();
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        fc.integer({ min: 1, max: 400 }),
        (ms, days) => {
          const now = new Date(ms);
          const kept = firstKeptDay(now, days)!;
          // Every moment of a retired day (before `kept`) is more than `days` old ...
          expect(kept.getTime()).toBeLessThanOrEqual(now.getTime() - days * DAY);
          // ... and no day is kept longer than one day past it.
          expect(kept.getTime()).toBeGreaterThan(now.getTime() - (days + 1) * DAY);
          expect(Math.abs(kept.getTime() % DAY)).toBe(0);
        },
      ),
    );
  });

  it('refuses a retention shorter than the BILLING stream may deliver a usage event again', () => {
    const env = {
      DATABASE_URL: 'postgres://x@127.0.0.1/x',
      HTTP_PORT: '0',
      OPERATOR_TOKEN: 'op_test_operator_token_0123456789',
    };
    expect(parseConfig(configSchema, env).USAGE_JOURNAL_RETENTION_DAYS).toBe(35);
    expect(
      parseConfig(configSchema, { ...env, USAGE_JOURNAL_RETENTION_DAYS: '0' })
        .USAGE_JOURNAL_RETENTION_DAYS,
    ).toBe(0);
    expect(
      parseConfig(configSchema, { ...env, USAGE_JOURNAL_RETENTION_DAYS: '8' })
        .USAGE_JOURNAL_RETENTION_DAYS,
    ).toBe(8);
    expect(() => parseConfig(configSchema, { ...env, USAGE_JOURNAL_RETENTION_DAYS: '7' })).toThrow(
      /USAGE_JOURNAL_RETENTION_DAYS.*at least 8 days/,
    );
  });
});
