import { usageFlushId, type AccountUsage, type UsageFlushed } from '@meridian/contracts';
import { aggregateFlushes, hourOf } from './flush-aggregate';

function part(producerId: string, windowStart: string, accounts: AccountUsage[]): UsageFlushed {
  return {
    id: usageFlushId(producerId, windowStart, 0),
    producerId,
    windowStart,
    windowEnd: new Date(Date.parse(windowStart) + 1_000).toISOString(),
    part: 0,
    parts: 1,
    accounts,
  };
}
const node = (accountId: string, method: string, cu: number, calls = 1): AccountUsage => ({
  kind: 'node',
  accountId,
  items: [{ network: 'eth-mainnet', method, calls, cu }],
  totalCu: cu,
});

describe('aggregateFlushes', () => {
  it('one charge per account across producers and windows, summed to the CU', () => {
    const agg = aggregateFlushes([
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
    ]);
    expect(agg.charges).toEqual([
      { accountId: 'a', totalCu: 135, lastWindowEnd: '2026-01-01T01:00:01.000Z' },
      { accountId: 'b', totalCu: 20, lastWindowEnd: '2026-01-01T01:00:00.000Z' },
    ]);
    expect(agg.items).toBe(4);
    expect(agg.entriesOf.get('a')).toHaveLength(3);
  });

  it.each([
    ['2026-01-01T00:59:59.999Z', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01T01:00:00.000Z', '2026-01-01T01:00:00.000Z'],
  ])('window start %s reports in hour %s', (start, hour) => {
    expect(hourOf(start)).toBe(hour);
  });

  it('rolls up per account, hour, network and method, deliveries as webhooks/webhook_delivery, in key order', () => {
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
