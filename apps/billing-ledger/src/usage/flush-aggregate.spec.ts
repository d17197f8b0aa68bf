import {
  compactFlush,
  usageFlushId,
  type AccountUsage,
  type UsageFlushedV2,
} from '@meridian/contracts';
import {
  aggregateFlushes,
  aggregateParts,
  cuEndedBy,
  entriesOf,
  FlushAccumulator,
  flushPart,
  type FlushAggregate,
} from './flush-aggregate';

/** A compact part (ADR 0105) of these account entries, packed as a producer packs them. */
function part(producerId: string, windowStart: string, accounts: AccountUsage[]): UsageFlushedV2 {
  return compactFlush({
    id: usageFlushId(producerId, windowStart, 0),
    producerId,
    windowStart,
    windowEnd: new Date(Date.parse(windowStart) + 1_000).toISOString(),
    part: 0,
    parts: 1,
    accounts,
  });
}
const node = (accountId: string, method: string, cu: number, calls = 1): AccountUsage => ({
  kind: 'node',
  accountId,
  items: [{ network: 'eth-mainnet', method, calls, cu }],
  totalCu: cu,
});

describe('aggregateFlushes', () => {
  it('one charge per account across producers and windows, summed to the CU', () => {
    const parts = [
      part('gw-a', '2026-01-01T00:59:59.000Z', [
        node('b', 'eth_call', 20),
        node('a', 'eth_call', 40, 2),
      ]),
      part('gw-b', '2026-01-01T01:00:00.000Z', [
        node('a', 'eth_call', 20),
        {
          kind: 'webhook_delivery',
          accountId: 'a',
          items: [{ webhookId: 'wh', attempts: 3, cu: 75 }],
          totalCu: 75,
        },
      ]),
    ];
    const agg = aggregateFlushes(parts);
    expect(agg.charges).toEqual([
      {
        accountId: 'a',
        totalCu: 135,
        firstWindowEnd: '2026-01-01T01:00:00.000Z',
        lastWindowEnd: '2026-01-01T01:00:01.000Z',
      },
      {
        accountId: 'b',
        totalCu: 20,
        firstWindowEnd: '2026-01-01T01:00:00.000Z',
        lastWindowEnd: '2026-01-01T01:00:00.000Z',
      },
    ]);
    expect(agg.items).toBe(4);
    expect(entriesOf(agg.parts, new Set(['a']))).toHaveLength(3);
    // Parts arriving out of window order (a producer re-sending a held part) span the same.
    const reversed = aggregateFlushes([...parts].reverse());
    expect(reversed.charges).toEqual(agg.charges);
  });

  it("cuEndedBy: each account's CU in the parts whose window ended by its own moment (late usage, ADR 0108)", () => {
    const parts = [
      part('gw-a', '2026-01-06T07:29:58.000Z', [
        node('a', 'eth_call', 300),
        node('b', 'eth_call', 7),
      ]),
      part('gw-b', '2026-01-06T07:29:59.000Z', [
        node('a', 'eth_call', 40),
        node('b', 'eth_call', 5),
      ]),
      part('gw-a', '2026-01-06T07:29:59.500Z', [
        node('a', 'eth_call', 200),
        node('b', 'eth_call', 3),
      ]),
    ].map((p) => flushPart(p));
    // Window ends: 07:29:59.000, 07:30:00.000 (at the boundary: the prior's), 07:30:00.500.
    const late = cuEndedBy(
      parts,
      new Map([
        ['a', Date.parse('2026-01-06T07:30:00.000Z')],
        ['b', Date.parse('2026-01-06T07:29:59.500Z')],
      ]),
    );
    expect(late).toEqual(
      new Map([
        ['a', 340],
        ['b', 7],
      ]),
    );
    // An account of the map in no part ending by its moment: 0, not missing.
    expect(cuEndedBy(parts, new Map([['c', Date.parse('2026-01-07T00:00:00.000Z')]]))).toEqual(
      new Map([['c', 0]]),
    );
  });

  it('cuEndedBy takes a batch in which 300,000 accounts straddle one reset', () => {
    const parts = [
      flushPart(part('gw-a', '2026-01-06T07:29:58.000Z', [node('a', 'eth_call', 300)])),
    ];
    const reset = Date.parse('2026-01-06T07:30:00.000Z');
    const boundaries = new Map([['a', reset]]);
    for (let i = 0; i < 300_000; i++) boundaries.set(`acc_${i}`, reset);
    const late = cuEndedBy(parts, boundaries);
    expect(late.size).toBe(300_001);
    expect(late.get('a')).toBe(300);
  });

  it('rolls up per account, hour, network and method, deliveries as webhooks/webhook_delivery, by account', () => {
    const agg = aggregateFlushes([
      part('gw-a', '2026-01-01T00:00:00.000Z', [
        node('a', 'eth_call', 20),
        node('b', 'eth_call', 20),
      ]),
      part('gw-b', '2026-01-01T00:00:01.000Z', [node('a', 'eth_call', 20)]),
      part('dw-1', '2026-01-01T01:00:00.000Z', [
        {
          kind: 'webhook_delivery',
          accountId: 'a',
          items: [
            { webhookId: 'w1', attempts: 1, cu: 25 },
            { webhookId: 'w2', attempts: 2, cu: 50 },
          ],
          totalCu: 75,
        },
      ]),
    ]);
    expect(agg.rollups).toEqual([
      {
        accountId: 'a',
        hour: '2026-01-01T00:00:00.000Z',
        network: 'eth-mainnet',
        method: 'eth_call',
        calls: 2,
        cu: 40,
      },
      {
        accountId: 'a',
        hour: '2026-01-01T01:00:00.000Z',
        network: 'webhooks',
        method: 'webhook_delivery',
        calls: 3,
        cu: 75,
      },
      {
        accountId: 'b',
        hour: '2026-01-01T00:00:00.000Z',
        network: 'eth-mainnet',
        method: 'eth_call',
        calls: 1,
        cu: 20,
      },
    ]);
  });
});

/** An aggregate with each part as its header and totals (without its functions). */
function comparable(aggregate: FlushAggregate) {
  return {
    ...aggregate,
    parts: aggregate.parts.map(({ body: _body, mayHold: _mayHold, ...header }) => header),
  };
}

describe('flushPart / aggregateParts', () => {
  it("keeps a part's header and totals, and decodes its body again from the message bytes", () => {
    const flush = part('gw-a', '2026-01-01T00:00:00.000Z', [
      node('a', 'eth_call', 20, 2),
      node('b', 'eth_call', 60),
    ]);
    const fromBytes = flushPart(flush, new TextEncoder().encode(JSON.stringify(flush)));
    expect(fromBytes).toMatchObject({
      id: flush.id,
      producerId: 'gw-a',
      windowStart: flush.windowStart,
      windowEnd: flush.windowEnd,
      accounts: 2,
      totalCu: 80,
    });
    expect(fromBytes.body()).toEqual(flush);
    expect(fromBytes.body()).not.toBe(flush);
    expect(flushPart(flush).body()).toBe(flush);
  });

  it('decodes the bytes of a v1 part (a producer not yet upgraded) as the compact part it stands for', () => {
    const v1 = {
      id: usageFlushId('gw-old', '2026-01-01T00:00:00.000Z', 0),
      producerId: 'gw-old',
      windowStart: '2026-01-01T00:00:00.000Z',
      windowEnd: '2026-01-01T00:00:01.000Z',
      part: 0,
      parts: 1,
      accounts: [node('a', 'eth_call', 20), node('b', 'eth_getBalance', 40, 2)],
    };
    const compact = compactFlush(v1);
    const kept = flushPart(compact, new TextEncoder().encode(JSON.stringify(v1)), 1);
    expect(kept).toMatchObject({ id: v1.id, accounts: 2, totalCu: 60 });
    expect(kept.body()).toEqual(compact);
    expect(kept.mayHold('b')).toBe(true);
    expect(kept.mayHold('c')).toBe(false);
  });

  it('entriesOf decodes only the parts whose bytes name a parked account', () => {
    const flushes = [
      part('gw-a', '2026-01-01T00:00:00.000Z', [
        node('a', 'eth_call', 20),
        node('x', 'eth_call', 40),
      ]),
      part('gw-b', '2026-01-01T00:00:00.000Z', [node('a', 'eth_call', 60)]),
      part('gw-c', '2026-01-01T00:00:00.000Z', [node('xa', 'eth_call', 80)]),
    ];
    let decoded = 0;
    const parts = flushes.map((f) => {
      const kept = flushPart(f, new TextEncoder().encode(JSON.stringify(f)));
      return { ...kept, body: () => (decoded++, kept.body()) };
    });
    expect(parts.map((p) => p.mayHold('x'))).toEqual([true, false, false]);
    const found = entriesOf(parts, new Set(['x']));
    expect(found.map((f) => [f.flushId, f.entry.accountId, f.entry.totalCu])).toEqual([
      [flushes[0]!.id, 'x', 40],
    ]);
    expect(decoded).toBe(1);
    // A part kept without its bytes may hold anything (its body is in memory anyway).
    expect(flushPart(flushes[1]!).mayHold('x')).toBe(true);
  });

  it('sums kept parts again to what their bodies sum to (a batch without its duplicates)', () => {
    const flushes = [
      part('gw-a', '2026-01-01T00:00:00.000Z', [node('a', 'eth_call', 20)]),
      part('gw-b', '2026-01-01T00:00:00.000Z', [
        node('a', 'eth_call', 40),
        node('c', 'eth_call', 20),
      ]),
    ];
    const parts = flushes.map((f) => flushPart(f, new TextEncoder().encode(JSON.stringify(f))));
    const again = aggregateParts(parts);
    expect(comparable(again)).toEqual(comparable(aggregateFlushes(flushes)));
    expect(again.parts).toEqual(parts);
  });
});

describe('FlushAccumulator', () => {
  it('parts added one by one as they arrive sum to what aggregateFlushes gives for all of them', () => {
    const parts = [
      part('gw-a', '2026-01-01T00:59:59.000Z', [
        node('c', 'eth_call', 20),
        node('a', 'eth_call', 40),
      ]),
      part('gw-b', '2026-01-01T01:00:00.000Z', [
        node('b', 'eth_getBalance', 20),
        node('a', 'eth_chainId', 20),
      ]),
      part('gw-a', '2026-01-01T01:00:00.000Z', [node('a', 'eth_call', 60, 3)]),
    ];
    const accumulator = new FlushAccumulator();
    for (const p of parts) accumulator.add(p);
    expect(accumulator.size).toBe(3);
    expect(comparable(accumulator.result())).toEqual(comparable(aggregateFlushes(parts)));
    const { charges, rollups } = accumulator.result();
    expect(charges.map((c) => c.accountId)).toEqual(['a', 'b', 'c']);
    // By account (the lock order), an account's rollups as first met (folding sorts: ADR 0104).
    expect(
      rollups.map((r) => `${r.accountId} ${r.hour.slice(11, 13)} ${r.method} ${r.cu}`),
    ).toEqual([
      'a 00 eth_call 40',
      'a 01 eth_chainId 20',
      'a 01 eth_call 60',
      'b 01 eth_getBalance 20',
      'c 00 eth_call 20',
    ]);
  });

  it('sums an account with many methods like one with few', () => {
    const methods = Array.from({ length: 40 }, (_, i) => `m_${String(39 - i).padStart(2, '0')}`);
    const parts = [0, 1, 2].map((p) =>
      part(`gw-${p}`, '2026-01-01T00:00:00.000Z', [
        {
          kind: 'node',
          accountId: 'a',
          items: methods.map((method, i) => ({
            network: 'eth-mainnet',
            method,
            calls: 1,
            cu: i + 1,
          })),
          totalCu: methods.reduce((sum, _, i) => sum + i + 1, 0),
        },
      ]),
    );
    const agg = aggregateFlushes(parts);
    expect(agg.rollups).toHaveLength(40);
    expect(agg.rollups.map((r) => r.method)).toEqual(methods);
    for (const rollup of agg.rollups) {
      const i = methods.indexOf(rollup.method);
      expect(rollup).toMatchObject({ accountId: 'a', calls: 3, cu: 3 * (i + 1) });
    }
    expect(agg.charges).toEqual([
      {
        accountId: 'a',
        totalCu: 3 * 820,
        firstWindowEnd: '2026-01-01T00:00:01.000Z',
        lastWindowEnd: '2026-01-01T00:00:01.000Z',
      },
    ]);
  });

  it('entriesOf finds the entries of the named accounts with their part (what is parked)', () => {
    const first = part('gw-a', '2026-01-01T00:00:00.000Z', [
      node('a', 'eth_call', 20),
      node('x', 'eth_call', 40),
    ]);
    const second = part('gw-b', '2026-01-01T00:00:00.000Z', [node('x', 'eth_call', 60)]);
    const found = entriesOf([flushPart(first), flushPart(second)], new Set(['x']));
    expect(found.map((f) => [f.flushId, f.entry.totalCu])).toEqual([
      [first.id, 40],
      [second.id, 60],
    ]);
  });
});
