import {
  Consumers,
  deliveryJobsConsumer,
  deliveryJobsConsumers,
  deploymentConsumers,
  ledgerPartitionOf,
  ledgerUsageConsumers,
  ledgerUsageConsumersOf,
  USAGE_PARTITIONS,
  usagePartitionOf,
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

  it('ledger replicas: replica i of n reads the usage partitions k with k mod n = i; replica 0 also the unpartitioned usage (ADR 0107)', () => {
    const view = (list: ReturnType<typeof ledgerUsageConsumersOf>) =>
      list.map((c) => [c.durable, c.filterSubject, c.partitionOf]);
    const all = ledgerUsageConsumersOf();
    expect(view(all)).toEqual([
      ['billing-ledger-usage', 'billing.usage.*.v1.*', 'billing-ledger-usage'],
      ...Array.from({ length: USAGE_PARTITIONS }, (_, k) => [
        `billing-ledger-usage-p${k}of8`,
        `billing.usage.flushed.v2.u${k}`,
        'billing-ledger-usage',
      ]),
    ]);
    const names = (partition: { index: number; count: number }) =>
      ledgerUsageConsumers(partition).map((c) => c.durable.replace('billing-ledger-usage', ''));
    expect(names(SINGLE_PARTITION)).toEqual(all.map((c) => c.durable.slice(20)));
    expect(names({ index: 0, count: 2 })).toEqual(['', '-p0of8', '-p2of8', '-p4of8', '-p6of8']);
    expect(names({ index: 1, count: 2 })).toEqual(['-p1of8', '-p3of8', '-p5of8', '-p7of8']);
    expect(names({ index: 2, count: 3 })).toEqual(['-p2of8', '-p5of8']);
    // Every count from 1 to 8: each usage partition read by exactly one replica.
    for (let count = 1; count <= USAGE_PARTITIONS; count++) {
      const read = Array.from({ length: count }, (_, index) =>
        ledgerUsageConsumers({ index, count }).map((c) => c.durable),
      ).flat();
      expect(read.sort()).toEqual(all.map((c) => c.durable).sort());
    }
    // Whatever the count, a replica's usage partitions share the declared parts in flight; each
    // durable is provisioned for a replica that reads it alone.
    for (let count = 1; count <= USAGE_PARTITIONS; count++) {
      const mine = ledgerUsageConsumers({ index: count - 1, count }).filter(
        (c) => c.durable !== Consumers.ledgerUsage.durable,
      );
      const flight = mine.reduce((sum, c) => sum + c.concurrency, 0);
      expect(flight).toBeGreaterThanOrEqual(Consumers.ledgerUsage.concurrency);
      expect(flight).toBeLessThan(Consumers.ledgerUsage.concurrency + mine.length);
      for (const c of mine) expect(c.pullBatch).toBeLessThanOrEqual(c.concurrency);
    }
    expect(
      ledgerUsageConsumers({ index: 1, count: 2 }).map((c) => [c.concurrency, c.pullBatch]),
    ).toEqual(Array(4).fill([64, 32]));
    for (const c of all) expect(c.concurrency).toBe(Consumers.ledgerUsage.concurrency);
    // An account's replica is its usage partition's, for any count; with a count dividing 8 it
    // is the replica FNV-1a modulo the count names (the routing of ADR 0105 step 3).
    for (let i = 0; i < 200; i++) {
      const id = `acc_${i.toString(16).padStart(24, '0')}`;
      expect(usagePartitionOf(id)).toBe(partitionOf(id, USAGE_PARTITIONS));
      for (const count of [1, 2, 3, 5, 8])
        expect(ledgerPartitionOf(id, count)).toBe(usagePartitionOf(id) % count);
      for (const count of [1, 2, 4, 8])
        expect(ledgerPartitionOf(id, count)).toBe(partitionOf(id, count));
    }
    // What a deployment provisions: the ledger's durables whatever the other roles' counts.
    const deployed = deploymentConsumers({ matcher: 2, delivery: 3 }).map((c) => c.durable);
    for (const c of all) expect(deployed).toContain(c.durable);
    expect(deployed).toContain('delivery-worker-jobs-p2of3');
    expect(deployed).toContain('webhook-matcher-chain-blocks-p1of2');
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
