import { UsageRecordedSchema } from '@meridian/contracts';
import { UsageMeter } from './usage-meter';

describe('UsageMeter', () => {
  it('sums CU per account, network and method into one valid event per account', () => {
    const meter = new UsageMeter();
    meter.add('a1', 'eth-mainnet', 'eth_call', 20);
    meter.add('a1', 'eth-mainnet', 'eth_call', 20);
    meter.add('a1', 'eth-mainnet', 'debug_traceCall', 40);
    meter.add('a2', 'sui-mainnet', 'suix_getLatestSuiSystemState', 100);
    const events = meter.drain(
      'gw-1',
      new Date('2026-01-01T00:00:00Z'),
      new Date('2026-01-01T00:00:01Z'),
    );
    expect(events).toHaveLength(2);
    const a1 = events.find((e) => e.accountId === 'a1')!;
    expect(a1.totalCu).toBe(80);
    expect(a1.items).toEqual([
      { network: 'eth-mainnet', method: 'eth_call', calls: 2, cu: 40 },
      { network: 'eth-mainnet', method: 'debug_traceCall', calls: 1, cu: 40 },
    ]);
    expect(a1.id).toBe('gw-1:a1:2026-01-01T00:00:00.000Z');
    for (const event of events) expect(UsageRecordedSchema.safeParse(event).success).toBe(true);
    expect(meter.drain('gw-1', new Date(), new Date())).toEqual([]);
  });
});
