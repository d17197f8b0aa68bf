import {
  Events,
  USAGE_PARTITIONS,
  UsageFlushedV2Schema,
  nextUsageCut,
  usageHourOf,
  usagePartitionOf,
  unpackAccounts,
  type UsageFlushed,
  type UsageFlushedV2,
} from '@meridian/contracts';
import { FakeClock } from '@meridian/time';
import fc from 'fast-check';
import { flushParts, nextUsageWindow, UsageFlusher, usagePartBytes } from './usage-flusher';
import { UsageMeter } from './usage-meter';

function meterWith(accounts: number, methods = 1): UsageMeter {
  const meter = new UsageMeter();
  for (let a = 0; a < accounts; a++)
    for (let m = 0; m < methods; m++) meter.add(`acc_${a}`, 'eth-mainnet', `eth_method_${m}`, 20);
  return meter;
}

/** A JetStream publisher stand-in that records parts and fails while `down` is set. */
class RecordingPublisher {
  readonly stored = new Map<string, UsageFlushedV2>();
  /** Parts published as v1 (USAGE_FLUSH_VERSION=1), by id. */
  readonly storedV1 = new Map<string, UsageFlushed>();
  published = 0;
  down = false;
  publish(contract: { type: string }, part: UsageFlushedV2 | UsageFlushed) {
    this.published += 1;
    if (this.down) return Promise.reject(new Error('nats down'));
    if (contract.type === Events.usageFlushed.type) {
      this.storedV1.set(part.id, Events.usageFlushed.schema.parse(part));
      return Promise.resolve({ stream: 'BILLING', seq: this.published, duplicate: false });
    }
    expect(contract.type).toBe(Events.usageFlushedV2.type);
    UsageFlushedV2Schema.parse(part);
    this.stored.set(part.id, part as UsageFlushedV2);
    return Promise.resolve({ stream: 'BILLING', seq: this.published, duplicate: false });
  }
}

describe('UsageMeter', () => {
  it('sums node CU per account, network and method, and delivery CU per webhook', () => {
    const meter = new UsageMeter();
    meter.add('a1', 'eth-mainnet', 'eth_call', 20);
    meter.add('a1', 'eth-mainnet', 'eth_call', 20);
    meter.add('a1', 'eth-mainnet', 'debug_traceCall', 40, 1);
    meter.addDelivery('a1', 'wh_1', 25);
    meter.addDelivery('a1', 'wh_1', 25);
    meter.addDelivery('a2', 'wh_2', 25);
    expect(meter.drain()).toEqual([
      {
        kind: 'node',
        accountId: 'a1',
        items: [
          { network: 'eth-mainnet', method: 'eth_call', calls: 2, cu: 40 },
          { network: 'eth-mainnet', method: 'debug_traceCall', calls: 1, cu: 40 },
        ],
        totalCu: 80,
      },
      {
        kind: 'webhook_delivery',
        accountId: 'a1',
        items: [{ webhookId: 'wh_1', attempts: 2, cu: 50 }],
        totalCu: 50,
      },
      {
        kind: 'webhook_delivery',
        accountId: 'a2',
        items: [{ webhookId: 'wh_2', attempts: 1, cu: 25 }],
        totalCu: 25,
      },
    ]);
    expect(meter.drain()).toEqual([]);
  });
});

describe('flushParts', () => {
  it.each([
    // accounts, methods each, part bytes, expected parts: one per usage partition with usage
    // (ADR 0107), more where a partition's accounts exceed the part size
    [1, 1, 256 * 1024, 1],
    [2_000, 1, 64 * 1024, 8],
    [10_000, 1, 64 * 1024, 8],
    [10_000, 3, 64 * 1024, 8],
    [40_000, 1, 64 * 1024, 16],
    [3, 1, 1, 3],
  ])(
    '%d accounts x %d methods under %d bytes: %d compact parts',
    (accounts, methods, bytes, parts) => {
      const entries = meterWith(accounts, methods).drain();
      const built = flushParts(
        'gw-1',
        '2026-01-01T00:00:00.000Z',
        '2026-01-01T00:00:01.000Z',
        entries,
        bytes,
      );
      expect(built).toHaveLength(parts);
      expect(built.map((p) => p.part)).toEqual([...Array(parts).keys()]);
      expect(new Set(built.map((p) => p.id)).size).toBe(parts);
      for (const [i, part] of built.entries()) {
        expect(UsageFlushedV2Schema.safeParse(part).success).toBe(true);
        expect(part.parts).toBe(parts);
        const size = Buffer.byteLength(JSON.stringify(part));
        if (part.accounts.length > 1) expect(size).toBeLessThanOrEqual(bytes);
        // The estimate that cuts parts is close: a part followed by one of its usage partition
        // is nearly full.
        const next = built[i + 1];
        if (next?.ledgerPartition === part.ledgerPartition && bytes > 1)
          expect(size).toBeGreaterThan(bytes * 0.9);
      }
      // Every account exactly once, whole, in the flush's order within its usage partition, to
      // the CU.
      const byPartition = [...entries].sort(
        (a, b) => usagePartitionOf(a.accountId) - usagePartitionOf(b.accountId),
      );
      expect(built.flatMap((p) => unpackAccounts(p))).toEqual(byPartition);
    },
  );

  it('keeps an account with node and webhook usage under one index, its rows together', () => {
    // Two accounts of one usage partition, so one part.
    expect(usagePartitionOf('a9')).toBe(usagePartitionOf('a1'));
    const meter = new UsageMeter();
    meter.add('a1', 'eth-mainnet', 'eth_call', 20);
    meter.addDelivery('a9', 'wh_1', 25);
    meter.addDelivery('a1', 'wh_1', 25);
    const [part] = flushParts('gw-1', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.000Z', [
      ...meter.drain(),
    ]);
    expect(part!.accounts).toEqual(['a1', 'a9']);
    expect(part!.lines).toEqual([
      { kind: 'node', network: 'eth-mainnet', method: 'eth_call' },
      { kind: 'webhook_delivery', webhookId: 'wh_1' },
    ]);
    expect(part!.usage).toEqual([0, 0, 1, 20, 0, 1, 1, 25, 1, 1, 1, 25]);
    expect(part!.totalCu).toBe(70);
    expect(UsageFlushedV2Schema.safeParse(part).success).toBe(true);
  });

  it('routes each part to one usage partition holding only its accounts, whatever the ledger runs (ADR 0107)', () => {
    const meter = meterWith(10_000, 1);
    meter.addDelivery('acc_7', 'wh_1', 25);
    const entries = meter.drain();
    const built = flushParts(
      'gw-1',
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:00:01.000Z',
      entries,
      64 * 1024,
    );
    // Parts numbered across the flush, ids unique, each valid and under the size.
    expect(built.map((p) => p.part)).toEqual([...Array(built.length).keys()]);
    expect(new Set(built.map((p) => p.id)).size).toBe(built.length);
    const partitions = new Set<number>();
    for (const part of built) {
      expect(UsageFlushedV2Schema.safeParse(part).success).toBe(true);
      expect(part.parts).toBe(built.length);
      expect(Buffer.byteLength(JSON.stringify(part))).toBeLessThanOrEqual(64 * 1024);
      partitions.add(part.ledgerPartition!);
      for (const account of part.accounts)
        expect(usagePartitionOf(account)).toBe(part.ledgerPartition);
      expect(Events.usageFlushedV2.subjectOf(part)).toBe(
        `billing.usage.flushed.v2.u${part.ledgerPartition}`,
      );
    }
    expect([...partitions].sort()).toEqual([...Array(USAGE_PARTITIONS).keys()]);
    // Every account exactly once, to the CU, its node and webhook entries in the same part.
    const sorted = (list: typeof entries) =>
      [...list].sort((a, b) => (a.accountId + a.kind < b.accountId + b.kind ? -1 : 1));
    expect(sorted(built.flatMap((p) => unpackAccounts(p)))).toEqual(sorted(entries));
    const withDelivery = built.filter((p) => p.accounts.includes('acc_7'));
    expect(withDelivery).toHaveLength(1);
    // Deterministic: a retry re-sends the same bodies.
    expect(
      flushParts(
        'gw-1',
        '2026-01-01T00:00:00.000Z',
        '2026-01-01T00:00:01.000Z',
        entries,
        64 * 1024,
      ),
    ).toEqual(built);
  });

  it("one account's usage is one part on its usage partition's subject", () => {
    const meter = new UsageMeter();
    meter.add('acc_1', 'eth-mainnet', 'eth_call', 20, 1);
    const [part, ...rest] = flushParts(
      'gw-1',
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:00:01.000Z',
      meter.drain(),
    );
    expect(rest).toEqual([]);
    expect(part!.ledgerPartition).toBe(usagePartitionOf('acc_1'));
    expect(Events.usageFlushedV2.subjectOf(part!)).toBe(
      `billing.usage.flushed.v2.u${usagePartitionOf('acc_1')}`,
    );
  });
});

describe('UsageFlusher', () => {
  function setup(partBytes?: number, version?: 1 | 2, startAt = '2026-01-01T00:00:00.000Z') {
    const clock = new FakeClock(startAt);
    const meter = new UsageMeter();
    const publisher = new RecordingPublisher();
    const outcomes: string[] = [];
    const flusher = new UsageFlusher(publisher, {
      producerId: 'gw-1',
      intervalMs: 1_000,
      now: () => clock.now(),
      drain: () => meter.drain(),
      partBytes,
      version,
      onPublished: (outcome) => outcomes.push(outcome),
    });
    return { clock, meter, publisher, flusher, outcomes };
  }

  it('publishes one message per part for every account of the window, not one per account', async () => {
    const { clock, meter, publisher, flusher } = setup(4 * 1024);
    for (let a = 0; a < 500; a++) meter.add(`acc_${a}`, 'eth-mainnet', 'eth_call', 20);
    clock.advance(1_000);
    await flusher.flush();
    expect(publisher.published).toBeLessThan(25);
    const parts = [...publisher.stored.values()];
    expect(parts.flatMap((p) => p.accounts)).toHaveLength(500);
    expect(parts[0]!.windowStart).toBe('2026-01-01T00:00:00.000Z');
    expect(parts[0]!.windowEnd).toBe('2026-01-01T00:00:01.000Z');
  });

  it('publishes the v1 part each compact part stands for while USAGE_FLUSH_VERSION is 1 (an upgrade, ADR 0105)', async () => {
    const { clock, meter, publisher, flusher } = setup(4 * 1024, 1);
    expect(usagePartBytes(1) * 24).toBeLessThan(1024 * 1024);
    for (let a = 0; a < 300; a++) meter.add(`acc_${a}`, 'eth-mainnet', 'eth_call', 20);
    meter.addDelivery('acc_0', 'wh_1', 25);
    clock.advance(1_000);
    await flusher.flush();
    expect(publisher.stored.size).toBe(0);
    const parts = [...publisher.storedV1.values()];
    expect(parts.length).toBeGreaterThan(1);
    // Ids as the compact parts have them: `<producer>:<window>:<part>`, every account to the CU.
    expect(parts.map((p) => p.id)).toEqual(
      parts.map((_, i) => `gw-1:2026-01-01T00:00:00.000Z:${i}`),
    );
    const entries = parts.flatMap((p) => p.accounts);
    expect(entries).toHaveLength(301);
    expect(entries.reduce((sum, e) => sum + e.totalCu, 0)).toBe(300 * 20 + 25);
  });

  it('cuts parts published as v1 so that even long method names stay far below 1 MiB', async () => {
    const { clock, meter, publisher, flusher } = setup(undefined, 1);
    const method = `eth_${'x'.repeat(124)}`;
    for (let a = 0; a < 3_000; a++) meter.add(`acc_${a}`, 'eth-mainnet', method, 20);
    clock.advance(1_000);
    await flusher.flush();
    const parts = [...publisher.storedV1.values()];
    expect(parts.flatMap((p) => p.accounts)).toHaveLength(3_000);
    for (const part of parts)
      expect(Buffer.byteLength(JSON.stringify(part))).toBeLessThan(256 * 1024);
  });

  it('keeps parts NATS refused and re-sends them with the same ids and bodies', async () => {
    const { clock, meter, publisher, flusher, outcomes } = setup();
    meter.add('a1', 'eth-mainnet', 'eth_call', 20);
    publisher.down = true;
    clock.advance(1_000);
    await flusher.flush();
    expect(flusher.pendingParts).toBe(1);
    meter.add('a1', 'eth-mainnet', 'eth_call', 20);
    publisher.down = false;
    clock.advance(1_000);
    await flusher.flush();
    expect(outcomes).toEqual(['failed', 'ok', 'ok']);
    const parts = [...publisher.stored.values()];
    expect(parts.map((p) => p.id)).toEqual([
      'gw-1:2026-01-01T00:00:00.000Z:0',
      'gw-1:2026-01-01T00:00:01.001Z:0',
    ]);
    expect(parts.map((p) => p.totalCu)).toEqual([20, 20]);
    expect(flusher.pendingParts).toBe(0);
  });

  it('holds the window open while NATS refuses parts: memory and work stay bounded, nothing lost', async () => {
    const { clock, meter, publisher, flusher } = setup(4 * 1024);
    const tick = async () => {
      for (let a = 0; a < 200; a++) meter.add(`acc_${a}`, 'eth-mainnet', 'eth_call', 20);
      clock.advance(1_000);
      await flusher.flush();
    };
    publisher.down = true;
    await tick();
    const held = flusher.pendingParts;
    expect(held).toBeGreaterThan(1);
    // Ten minutes of outage: the same parts are tried each second, no new ones are cut, and the
    // meter holds one line per account and method.
    for (let i = 0; i < 600; i++) await tick();
    expect(flusher.pendingParts).toBe(held);
    expect(meter.pendingAccounts).toBe(200);
    expect(publisher.published).toBe(601 * held);

    publisher.down = false;
    clock.advance(1_000);
    await flusher.flush();
    expect(flusher.pendingParts).toBe(0);
    const parts = [...publisher.stored.values()];
    // The first window's parts as built, then the window held open for the outage.
    expect(new Set(parts.map((p) => p.windowStart))).toEqual(
      new Set(['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.001Z']),
    );
    expect(parts.find((p) => p.windowStart === '2026-01-01T00:00:01.001Z')!.windowEnd).toBe(
      '2026-01-01T00:10:02.000Z',
    );
    const cuOf = new Map<string, number>();
    for (const entry of parts.flatMap((p) => unpackAccounts(p)))
      cuOf.set(entry.accountId, (cuOf.get(entry.accountId) ?? 0) + entry.totalCu);
    expect(cuOf.size).toBe(200);
    for (const cu of cuOf.values()) expect(cu).toBe(601 * 20);
  });

  it('closes a held window where its hour ends, so its usage keeps its hour', async () => {
    const { clock, meter, publisher, flusher } = setup();
    clock.set('2026-01-01T00:59:58.000Z');
    publisher.down = true;
    for (let i = 0; i < 5; i++) {
      meter.add('a1', 'eth-mainnet', 'eth_call', 20);
      clock.advance(1_000);
      await flusher.flush();
    }
    // 00:59:59 (cut, refused), 01:00:00 (the hour ended: cut), 01:00:01-01:00:03 (held).
    expect(flusher.pendingParts).toBe(2);
    publisher.down = false;
    clock.advance(1_000);
    await flusher.flush();
    const parts = [...publisher.stored.values()];
    expect(parts.map((p) => [usageHourOf(p.windowStart), p.totalCu])).toEqual([
      ['2026-01-01T00:00:00.000Z', 20],
      ['2026-01-01T00:00:00.000Z', 20],
      ['2026-01-01T01:00:00.000Z', 60],
    ]);
  });

  it('closes a held window at the 07:30 UTC reset: its usage is the Free day it was metered in (ADR 0108)', async () => {
    const { clock, meter, publisher, flusher } = setup(
      undefined,
      undefined,
      '2026-01-01T07:05:00.000Z',
    );
    publisher.down = true;
    // A minute a tick, 07:06 to 07:35, with the stream refusing parts until 07:35.
    for (let i = 0; i < 30; i++) {
      meter.add('a1', 'eth-mainnet', 'eth_call', 20);
      clock.advance(60_000);
      if (i === 29) publisher.down = false;
      await flusher.flush();
    }
    const parts = [...publisher.stored.values()];
    expect(parts.map((p) => [p.windowStart, p.windowEnd, p.totalCu])).toEqual([
      // Cut at 07:06 and refused; held to the reset; usage metered up to 07:30 is before it.
      ['2026-01-01T07:05:00.000Z', '2026-01-01T07:06:00.000Z', 20],
      ['2026-01-01T07:06:00.001Z', '2026-01-01T07:29:59.999Z', 24 * 20],
      // From the reset, held until the stream took the parts at 07:35.
      ['2026-01-01T07:30:00.000Z', '2026-01-01T07:35:00.000Z', 5 * 20],
    ]);
  });

  it('closes its window at each usage cut, not up to an interval later', async () => {
    jest.useFakeTimers({ doNotFake: ['Date'] });
    try {
      const { clock, meter, publisher, flusher } = setup(
        undefined,
        undefined,
        '2026-01-01T07:29:59.700Z',
      );
      flusher.start();
      meter.add('a1', 'eth-mainnet', 'eth_call', 20);
      clock.set('2026-01-01T07:30:00.000Z');
      await jest.advanceTimersByTimeAsync(300);
      const parts = [...publisher.stored.values()];
      expect(parts.map((p) => [p.windowStart, p.windowEnd, p.totalCu])).toEqual([
        ['2026-01-01T07:29:59.700Z', '2026-01-01T07:29:59.999Z', 20],
      ]);
      // Armed again for the next cut, beside the interval; stop clears both.
      expect(jest.getTimerCount()).toBe(2);
      await flusher.stop();
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('cuts the window at the hour when a publish waits for its ack: later calls are the next hour', async () => {
    jest.useFakeTimers({ doNotFake: ['Date'] });
    try {
      const { clock, meter, publisher, flusher } = setup(
        undefined,
        undefined,
        '2026-01-01T15:59:58.500Z',
      );
      // NATS down: a publish gives up after its 5 s ack timeout, as JetStream's does.
      const publish = publisher.publish.bind(publisher);
      publisher.publish = (contract, part) =>
        publisher.down
          ? new Promise((_, reject) => setTimeout(() => reject(new Error('ack timeout')), 5_000))
          : publish(contract, part);
      publisher.down = true;
      flusher.start();
      const until = async (iso: string) => {
        while (clock.now().getTime() < Date.parse(iso)) {
          clock.advance(100);
          await jest.advanceTimersByTimeAsync(100);
        }
      };
      const call = () => meter.add('a1', 'eth-mainnet', 'eth_call', 20);
      await until('2026-01-01T15:59:58.600Z');
      call(); // cut at 15:59:59.500, its publish waits until 16:00:04.500
      await until('2026-01-01T15:59:59.700Z');
      call();
      await until('2026-01-01T16:00:00.200Z');
      call();
      await until('2026-01-01T16:00:00.800Z');
      call();
      await until('2026-01-01T16:00:02.100Z');
      call();
      await until('2026-01-01T16:00:06.000Z');
      publisher.down = false;
      await until('2026-01-01T16:00:20.000Z');
      await flusher.stop();
      const cuOfHour = new Map<string, number>();
      for (const part of publisher.stored.values()) {
        expect(part.windowEnd < '2026-01-01T16:00:00.000Z').toBe(
          part.windowStart < '2026-01-01T16:00:00.000Z',
        );
        const hour = usageHourOf(part.windowStart);
        cuOfHour.set(hour, (cuOfHour.get(hour) ?? 0) + part.totalCu);
      }
      expect(Object.fromEntries(cuOfHour)).toEqual({
        '2026-01-01T15:00:00.000Z': 2 * 20,
        '2026-01-01T16:00:00.000Z': 3 * 20,
      });
    } finally {
      jest.useRealTimers();
    }
  });

  it('reports usage after an idle spell in its own hour, not in the hour the spell began', async () => {
    const { clock, meter, publisher, flusher } = setup();
    for (let i = 0; i < 3; i++) {
      clock.advance(3_600_000);
      await flusher.flush();
    }
    meter.add('a1', 'eth-mainnet', 'eth_call', 20);
    clock.advance(1_000);
    await flusher.flush();
    const [part] = [...publisher.stored.values()];
    // The empty windows ended 1 ms before each hour's start: this one opened at 03:00.
    expect(part!.windowStart).toBe('2026-01-01T03:00:00.000Z');
    expect(usageHourOf(part!.windowStart)).toBe('2026-01-01T03:00:00.000Z');
  });

  it('gives every window its own id even when the clock stands still or steps back', async () => {
    const { clock, meter, publisher, flusher } = setup();
    for (const step of [0, 0, -5_000, 10]) {
      meter.add('a1', 'eth-mainnet', 'eth_call', 20);
      clock.advance(step);
      await flusher.flush();
    }
    const parts = [...publisher.stored.values()];
    expect(parts).toHaveLength(4);
    for (const part of parts) expect(part.windowEnd >= part.windowStart).toBe(true);
    for (let i = 1; i < parts.length; i++)
      expect(parts[i]!.windowStart > parts[i - 1]!.windowEnd).toBe(true);
  });

  it('an empty window publishes nothing; stop flushes what is left', async () => {
    const { meter, publisher, flusher } = setup();
    await flusher.flush();
    expect(publisher.published).toBe(0);
    meter.addDelivery('a1', 'wh_1', 25);
    await flusher.stop();
    expect(unpackAccounts([...publisher.stored.values()][0]!)[0]!.kind).toBe('webhook_delivery');
  });
});

describe('nextUsageWindow', () => {
  const at = (iso: string) => Date.parse(iso);

  it('starts at its first usage, or just after the last window when that usage is older', () => {
    const last = at('2026-01-01T00:00:01.000Z');
    const now = at('2026-01-01T00:00:02.000Z');
    const window = (first: string) =>
      Object.values(nextUsageWindow(last, at(first), now)).map((d) => d.toISOString());
    expect(window('2026-01-01T00:00:01.300Z')).toEqual([
      '2026-01-01T00:00:01.300Z',
      '2026-01-01T00:00:02.000Z',
    ]);
    // Left behind by the last cut (its batch limit, or a row locked then).
    expect(window('2026-01-01T00:00:00.700Z')).toEqual([
      '2026-01-01T00:00:01.001Z',
      '2026-01-01T00:00:02.000Z',
    ]);
  });

  it('starts at the first usage after an idle spell: the hour it was metered in', () => {
    const { start, end } = nextUsageWindow(
      at('2026-01-01T00:10:00.000Z'),
      at('2026-01-01T02:59:59.800Z'),
      at('2026-01-01T03:00:00.500Z'),
    );
    // It ends before the hour's start (the next window starts there).
    expect([start.toISOString(), end.toISOString()]).toEqual([
      '2026-01-01T02:59:59.800Z',
      '2026-01-01T02:59:59.999Z',
    ]);
    expect(usageHourOf(start)).toBe('2026-01-01T02:00:00.000Z');
    // A producer's first window.
    const first = nextUsageWindow(
      0,
      at('2026-01-01T03:00:01.000Z'),
      at('2026-01-01T03:00:02.000Z'),
    );
    expect(usageHourOf(first.start)).toBe('2026-01-01T03:00:00.000Z');
  });

  it("never spans a usage cut (an hour's start, the 07:30 UTC Free reset): it ends 1 ms before", () => {
    const window = (last: string, now: string) =>
      Object.values(nextUsageWindow(at(last), at(last) + 1, at(now))).map((d) => d.toISOString());
    expect(window('2026-01-01T07:10:00.000Z', '2026-01-01T07:30:00.400Z')).toEqual([
      '2026-01-01T07:10:00.001Z',
      '2026-01-01T07:29:59.999Z',
    ]);
    expect(window('2026-01-01T07:29:59.999Z', '2026-01-01T07:30:00.400Z')).toEqual([
      '2026-01-01T07:30:00.000Z',
      '2026-01-01T07:30:00.400Z',
    ]);
    // Successive windows, whatever the ticks: they tile time and none holds a cut.
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2 * 3_600_000 }), { maxLength: 30 }),
        (steps) => {
          let last = at('2026-01-01T06:00:00.000Z');
          let now = last;
          for (const step of steps) {
            now += step;
            const { start, end } = nextUsageWindow(last, last + 1, now);
            expect(start.getTime()).toBe(last + 1);
            expect(end.getTime()).toBeLessThan(nextUsageCut(start.getTime()));
            last = end.getTime();
          }
        },
      ),
    );
  });

  it('never overlaps the last window, even when the clock stands still or steps back', () => {
    let last = at('2026-01-01T00:00:05.000Z');
    for (const now of [
      '2026-01-01T00:00:05.000Z',
      '2026-01-01T00:00:01.000Z',
      '2026-01-01T00:00:05.000Z',
    ]) {
      // Usage stamped later than the cut (a clock that stepped back) starts it no later.
      const { start, end } = nextUsageWindow(last, at(now) + 500, at(now));
      expect(start.getTime()).toBeGreaterThan(last);
      expect(start.getTime()).toBeLessThanOrEqual(Math.max(at(now), last + 1));
      expect(end.getTime()).toBeGreaterThanOrEqual(start.getTime());
      last = end.getTime();
    }
  });
});
