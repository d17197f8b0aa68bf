import { Events } from '../events';
import { USAGE_FLUSH_PART_BYTES, usageFlushId, type UsageFlushed } from './billing.events';

const flush = (over: Partial<UsageFlushed> = {}): UsageFlushed => ({
  id: usageFlushId('gw-1', '2026-01-01T00:00:00.000Z', 0),
  producerId: 'gw-1',
  windowStart: '2026-01-01T00:00:00.000Z',
  windowEnd: '2026-01-01T00:00:01.000Z',
  part: 0,
  parts: 1,
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
