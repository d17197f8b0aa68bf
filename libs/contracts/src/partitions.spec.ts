import {
  Consumers,
  deliveryJobsConsumer,
  deliveryJobsConsumers,
  ledgerUsageConsumers,
  ledgerUsageConsumersOf,
} from './consumers';
import { deliveryRouteOf } from './events/webhook.events';
import {
  parsePartition,
  partitionedConsumers,
  partitionOf,
  partitionSetting,
  SINGLE_PARTITION,
} from './partitions';
import { Subjects } from './subjects';

describe('partitions (ADR 0422, 0432, 0105)', () => {
  it('i/n settings: parsed, and nonsense refused with the rule', () => {
    expect(parsePartition('1/3')).toEqual({ index: 1, count: 3 });
    expect(partitionSetting.parse(undefined)).toEqual(SINGLE_PARTITION);
    for (const bad of ['3/3', '1', 'a/b', '-1/2', '0/0']) {
      const result = partitionSetting.safeParse(bad);
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.message).toMatch(/i\/n with 0 <= i < n/);
    }
  });

  it('partitioned durables: one per replica, named -p<i>of<n>; one replica keeps the declared name', () => {
    const chain = partitionedConsumers(Consumers.matcherChainBlocks, 2);
    expect(chain.map((c) => c.durable)).toEqual([
      'webhook-matcher-chain-blocks-p0of2',
      'webhook-matcher-chain-blocks-p1of2',
    ]);
    // The matcher's replicas each read the whole stream.
    expect(chain.map((c) => c.filterSubject)).toEqual([
      Consumers.matcherChainBlocks.filterSubject,
      Consumers.matcherChainBlocks.filterSubject,
    ]);
    expect(chain.every((c) => c.partitionOf === 'webhook-matcher-chain-blocks')).toBe(true);
    expect(partitionedConsumers(Consumers.matcherChainBlocks, 1)[0]!.durable).toBe(
      'webhook-matcher-chain-blocks',
    );
  });

  it('delivery workers: worker i of n reads route i only; one worker reads every route', () => {
    expect(deliveryJobsConsumers(2).map((c) => [c.durable, c.filterSubject])).toEqual([
      ['delivery-worker-jobs-p0of2', 'webhook.delivery.requested.v1.r0'],
      ['delivery-worker-jobs-p1of2', 'webhook.delivery.requested.v1.r1'],
    ]);
    expect(deliveryJobsConsumer(SINGLE_PARTITION).filterSubject).toBe(
      'webhook.delivery.requested.v1.*',
    );
  });

  it('ledger partitions: partition i of n reads its compact parts; partition 0 also the unpartitioned usage (ADR 0105 step 3)', () => {
    const view = (list: ReturnType<typeof ledgerUsageConsumersOf>) =>
      list.map((c) => [c.durable, c.filterSubject, c.partitionOf]);
    expect(view(ledgerUsageConsumersOf(1))).toEqual([
      ['billing-ledger-usage', 'billing.usage.>', 'billing-ledger-usage'],
    ]);
    expect(view(ledgerUsageConsumersOf(2))).toEqual([
      ['billing-ledger-usage', 'billing.usage.*.v1.*', 'billing-ledger-usage'],
      ['billing-ledger-usage-p0of2', 'billing.usage.flushed.v2.u0', 'billing-ledger-usage'],
      ['billing-ledger-usage-p1of2', 'billing.usage.flushed.v2.u1', 'billing-ledger-usage'],
    ]);
    expect(view(ledgerUsageConsumers({ index: 0, count: 2 }))).toEqual(
      view(ledgerUsageConsumersOf(2)).slice(0, 2),
    );
    expect(view(ledgerUsageConsumers({ index: 1, count: 2 }))).toEqual(
      view(ledgerUsageConsumersOf(2)).slice(2),
    );
    expect(view(ledgerUsageConsumers(SINGLE_PARTITION))).toEqual(view(ledgerUsageConsumersOf(1)));
    // The unpartitioned subjects are exactly the v1 families.
    expect(Subjects.billing.usageV1).toBe('billing.usage.*.v1.*');
    for (const family of [Subjects.billing.usage, Subjects.billing.usageFlushed])
      expect(family.of('x')).toMatch(/^billing\.usage\.[a-z]+\.v1\.x$/);
  });

  it('a job goes on its route: by the host of the target, whatever its path, port, scheme or case', () => {
    const route = deliveryRouteOf('https://hooks.example.com/a', 4);
    expect(route).toBe(partitionOf('hooks.example.com', 4));
    for (const url of [
      'https://hooks.example.com/b?x=1',
      'https://HOOKS.example.com:8443/a',
      'http://hooks.example.com/',
    ])
      expect(deliveryRouteOf(url, 4)).toBe(route);
    expect(deliveryRouteOf('https://hooks.example.com/a', 1)).toBe(0);
    expect(deliveryRouteOf('not a url', 4)).toBe(0);
    // Hosts spread over every route.
    const routes = new Set(
      Array.from({ length: 64 }, (_, i) => deliveryRouteOf(`https://h${i}.example.com/`, 4)),
    );
    expect([...routes].sort()).toEqual([0, 1, 2, 3]);
  });
});
