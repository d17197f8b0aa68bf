import fc from 'fast-check';
import { Events } from '../events';
import {
  compactFlush,
  expandFlush,
  packAccounts,
  unpackAccounts,
  USAGE_FLUSH_PART_BYTES,
  usageFlushId,
  nextUsageCut,
  usageHourOf,
  UsagePacker,
  usageFlushVersionSetting,
  type AccountUsage,
  type UsageFlushed,
} from './billing.events';

/** A flush part's header (v1 and v2 alike). */
const header = {
  id: usageFlushId('gw-1', '2026-01-01T00:00:00.000Z', 0),
  producerId: 'gw-1',
  windowStart: '2026-01-01T00:00:00.000Z',
  windowEnd: '2026-01-01T00:00:01.000Z',
  part: 0,
  parts: 1,
};

const flush = (over: Partial<UsageFlushed> = {}): UsageFlushed => ({
  ...header,
  accounts: [
    {
      kind: 'node',
      accountId: 'acc_1',
      items: [{ network: 'eth-mainnet', method: 'eth_call', calls: 3, cu: 60 }],
      totalCu: 60,
    },
    {
      kind: 'webhook_delivery',
      accountId: 'acc_1',
      items: [{ webhookId: 'wh_1', attempts: 2, cu: 50 }],
      totalCu: 50,
    },
  ],
  ...over,
});

describe('usage flush contract (ADR 0103)', () => {
  it('accepts node and delivery usage of many accounts in one message', () => {
    expect(Events.usageFlushed.schema.parse(flush())).toEqual(flush());
    expect(Events.usageFlushed.subjectOf(flush())).toBe('billing.usage.flushed.v1.gw-1');
    expect(Events.usageFlushed.messageIdOf(flush())).toBe('gw-1:2026-01-01T00:00:00.000Z:0');
  });

  it.each<[string, Partial<UsageFlushed>]>([
    ['an id that is not <producer>:<window>:<part>', { id: 'gw-1:other' }],
    [
      'a part beyond the parts',
      { part: 1, parts: 1, id: usageFlushId('gw-1', '2026-01-01T00:00:00.000Z', 1) },
    ],
    ['no accounts', { accounts: [] }],
    [
      'a total that is not the sum of the items',
      {
        accounts: [
          {
            kind: 'node',
            accountId: 'acc_1',
            items: [{ network: 'eth-mainnet', method: 'eth_call', calls: 1, cu: 20 }],
            totalCu: 21,
          },
        ],
      },
    ],
    [
      'an account twice with the same kind',
      {
        accounts: [
          {
            kind: 'webhook_delivery',
            accountId: 'a',
            items: [{ webhookId: 'w', attempts: 1, cu: 25 }],
            totalCu: 25,
          },
          {
            kind: 'webhook_delivery',
            accountId: 'a',
            items: [{ webhookId: 'v', attempts: 1, cu: 25 }],
            totalCu: 25,
          },
        ],
      },
    ],
    [
      'fractional CU',
      {
        accounts: [
          {
            kind: 'node',
            accountId: 'a',
            items: [{ network: 'eth-mainnet', method: 'm', calls: 1, cu: 1.5 }],
            totalCu: 1.5,
          },
        ],
      },
    ],
    [
      'a producer id that is not a subject token',
      { producerId: 'gw.1', id: usageFlushId('gw.1', '2026-01-01T00:00:00.000Z', 0) },
    ],
  ])('refuses %s', (_name, over) => {
    expect(Events.usageFlushed.schema.safeParse(flush(over)).success).toBe(false);
  });

  it('a part fits the stream with room to spare', () => {
    expect(USAGE_FLUSH_PART_BYTES * 4).toBeLessThanOrEqual(1024 * 1024);
  });
});

describe('compact usage flush contract (ADR 0105)', () => {
  const token = fc.stringMatching(/^[a-z0-9_-]{1,12}$/);
  const item = fc.record({ calls: fc.nat(1_000), cu: fc.nat(1_000_000) });
  const entry: fc.Arbitrary<AccountUsage> = fc
    .oneof(
      fc.record({
        kind: fc.constant('node' as const),
        accountId: fc.constantFrom('a', 'b', 'c', 'd'),
        items: fc.array(
          fc
            .record({ network: fc.constantFrom('eth-mainnet', 'sui-mainnet'), method: token })
            .chain((line) => item.map((amounts) => ({ ...line, ...amounts }))),
          { minLength: 1, maxLength: 4 },
        ),
      }),
      fc.record({
        kind: fc.constant('webhook_delivery' as const),
        accountId: fc.constantFrom('a', 'b', 'c', 'd'),
        items: fc.array(
          fc
            .record({ webhookId: token, attempts: fc.nat(10) })
            .chain((w) => fc.nat(1_000).map((cu) => ({ ...w, cu }))),
          { minLength: 1, maxLength: 3 },
        ),
      }),
    )
    .map((e) => ({ ...e, totalCu: e.items.reduce((sum, i) => sum + i.cu, 0) }) as AccountUsage);
  /** Entries as a meter drains them: an account once per kind. */
  const entries = fc.uniqueArray(entry, {
    minLength: 1,
    maxLength: 12,
    selector: (e) => `${e.kind}:${e.accountId}`,
  });

  it('packs account entries into a valid part that unpacks to them, by account, node before webhooks', () => {
    fc.assert(
      fc.property(entries, (list) => {
        const packed = packAccounts(list);
        expect(Events.usageFlushedV2.schema.safeParse({ ...header, ...packed }).success).toBe(true);
        expect(Events.usageFlushedV2.accepts!({ ...header, ...packed })).toBe(true);
        const order = [...new Set(list.map((e) => e.accountId))];
        const expected = order.flatMap((id) =>
          ['node', 'webhook_delivery'].flatMap((kind) =>
            list.filter((e) => e.accountId === id && e.kind === kind),
          ),
        );
        expect(unpackAccounts(packed)).toEqual(expected);
        expect(packed.totalCu).toBe(list.reduce((sum, e) => sum + e.totalCu, 0));
      }),
      { numRuns: 300, seed: 105 },
    );
  });

  it('expands a compact part into the v1 part it stands for, and back (USAGE_FLUSH_VERSION=1)', () => {
    fc.assert(
      fc.property(entries, (list) => {
        const compact = { ...header, ...packAccounts(list) };
        const v1 = expandFlush(compact);
        expect(Events.usageFlushed.schema.safeParse(v1).success).toBe(true);
        expect(v1.id).toBe(compact.id);
        expect(v1.accounts).toEqual(unpackAccounts(compact));
        expect(unpackAccounts(compactFlush(v1))).toEqual(unpackAccounts(compact));
      }),
      { numRuns: 200, seed: 1051 },
    );
  });

  it('reads USAGE_FLUSH_VERSION: 2 unless set to 1, and nothing else', () => {
    expect(usageFlushVersionSetting.parse(undefined)).toBe(2);
    expect(usageFlushVersionSetting.parse('2')).toBe(2);
    expect(usageFlushVersionSetting.parse('1')).toBe(1);
    expect(usageFlushVersionSetting.safeParse('3').success).toBe(false);
  });

  it('measures a part as it grows, to the byte: each id, line and number with its comma', () => {
    fc.assert(
      fc.property(entries, (list) => {
        const packer = new UsagePacker();
        for (const e of list) packer.add(e);
        const { lines, accounts, usage } = packer.result();
        // The three arrays' elements as serialized, without brackets; one comma more each.
        const inner = [lines, accounts, usage].reduce(
          (sum, array) => sum + JSON.stringify(array).length - 2,
          0,
        );
        expect(packer.bytes).toBe(inner + 3);
      }),
      { numRuns: 300, seed: 1050 },
    );
  });

  it('is a v2 subject of its own, under the ledger usage filter with v1, by ledger partition', () => {
    const part = { ...header, ...packAccounts([flush().accounts[0]!]) };
    expect(Events.usageFlushedV2.subjectOf(part)).toBe('billing.usage.flushed.v2.u0');
    expect(Events.usageFlushedV2.subjectOf({ ...part, ledgerPartition: 3 })).toBe(
      'billing.usage.flushed.v2.u3',
    );
    expect(Events.usageFlushedV2.messageIdOf(part)).toBe(part.id);
  });
});

describe('usageHourOf', () => {
  it.each([
    ['2026-01-01T00:59:59.999Z', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01T01:00:00.000Z', '2026-01-01T01:00:00.000Z'],
  ])('window start %s reports in hour %s, as text or as a Date', (start, hour) => {
    expect(usageHourOf(start)).toBe(hour);
    expect(usageHourOf(new Date(start))).toBe(hour);
  });
});

describe('nextUsageCut', () => {
  const at = (iso: string) => Date.parse(iso);
  it.each([
    ['2026-01-01T00:00:00.000Z', '2026-01-01T01:00:00.000Z'],
    ['2026-01-01T07:00:00.000Z', '2026-01-01T07:30:00.000Z'],
    ['2026-01-01T07:29:59.999Z', '2026-01-01T07:30:00.000Z'],
    ['2026-01-01T07:30:00.000Z', '2026-01-01T08:00:00.000Z'],
    ['2026-01-01T23:59:59.999Z', '2026-01-02T00:00:00.000Z'],
  ])('after %s the next cut is %s', (from, cut) => {
    expect(new Date(nextUsageCut(at(from))).toISOString()).toBe(cut);
  });

  it('is the first hour start or 07:30 UTC strictly after the moment, over any moment', () => {
    const HOUR = 3_600_000;
    fc.assert(
      fc.property(
        fc.integer({ min: at('2020-01-01T00:00:00Z'), max: at('2040-01-01T00:00:00Z') }),
        (ms) => {
          const cut = nextUsageCut(ms);
          const isCut = (t: number) => t % HOUR === 0 || (t - 7.5 * HOUR) % (24 * HOUR) === 0;
          expect(cut).toBeGreaterThan(ms);
          expect(isCut(cut)).toBe(true);
          // No cut in between: every half hour after `ms` and before `cut` is not one.
          for (let t = Math.floor(ms / (HOUR / 2)) * (HOUR / 2) + HOUR / 2; t < cut; t += HOUR / 2)
            expect(isCut(t)).toBe(false);
          // The window a cut closes lies in one hour.
          expect(usageHourOf(new Date(ms))).toBe(usageHourOf(new Date(cut - 1)));
        },
      ),
    );
  });
});
