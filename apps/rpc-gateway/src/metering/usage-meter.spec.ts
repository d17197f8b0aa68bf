import {
  Events,
  UsageFlushedV2Schema,
  unpackAccounts,
  type UsageFlushedV2,
} from '@meridian/contracts';
import { FakeClock } from '@meridian/time';
import pino from 'pino';
import { Registry } from 'prom-client';
import { GatewayMetrics } from '../observability/gateway-metrics';
import { UsageMeter } from './usage-meter';
import { gatewayUsageFlusher } from './usage-publisher';

describe('gateway metering', () => {
  it('one window of node calls becomes one flush part carrying every account (of one usage partition), counted once', async () => {
    const clock = new FakeClock('2026-01-01T00:00:00Z');
    const meter = new UsageMeter();
    const parts: UsageFlushedV2[] = [];
    const publisher = {
      publish: (contract: { type: string }, part: unknown) => {
        expect(contract.type).toBe(Events.usageFlushedV2.type);
        parts.push(UsageFlushedV2Schema.parse(part));
        return Promise.resolve({ stream: 'BILLING', seq: parts.length, duplicate: false });
      },
    };
    const metrics = new GatewayMetrics(new Registry());
    const flusher = gatewayUsageFlusher(
      meter,
      publisher,
      'gw-1',
      () => clock.now(),
      metrics,
      pino({ level: 'silent' }),
      1_000,
    );
    meter.add('a1', 'eth-mainnet', 'eth_call', 20);
    meter.add('a1', 'eth-mainnet', 'eth_call', 20);
    // a9 shares a1's usage partition (ADR 0107), so the window is one part.
    meter.add('a9', 'sui-mainnet', 'suix_getLatestSuiSystemState', 100);
    clock.advance(1_000);
    await flusher.flush();
    expect(parts).toHaveLength(1);
    expect(unpackAccounts(parts[0]!).map((a) => [a.accountId, a.totalCu])).toEqual([
      ['a1', 40],
      ['a9', 100],
    ]);
    expect((await metrics.usagePublished.get()).values[0]).toMatchObject({
      labels: { outcome: 'ok' },
      value: 1,
    });
  });
});
