import { AckPolicy, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { deleteNatsNamespace, testNatsUrl, uniqueNatsPrefix } from './nats-namespace';

describe('uniqueNatsPrefix', () => {
  it('is short, valid in every NATS name, and unique', () => {
    const prefixes = Array.from({ length: 1_000 }, uniqueNatsPrefix);
    for (const prefix of prefixes) expect(prefix).toMatch(/^t[a-z0-9]{9}$/);
    expect(new Set(prefixes).size).toBe(prefixes.length);
  });
});

describe('deleteNatsNamespace', () => {
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await connect({ servers: testNatsUrl() });
  });
  afterAll(async () => {
    await nc.close();
  });

  const streamNames = async () => {
    const jsm = await jetstreamManager(nc);
    const names: string[] = [];
    for await (const name of jsm.streams.names()) names.push(name);
    return names;
  };

  it('removes streams, consumers and KV buckets under the prefix and nothing else', async () => {
    const prefix = uniqueNatsPrefix();
    const other = uniqueNatsPrefix();
    const jsm = await jetstreamManager(nc);

    await jsm.streams.add({ name: `${prefix}_CHAIN`, subjects: [`${prefix}.chain.>`] });
    await jsm.consumers.add(`${prefix}_CHAIN`, {
      durable_name: 'matcher',
      ack_policy: AckPolicy.Explicit,
    });
    await jsm.streams.add({ name: `${other}_SHARED`, subjects: [`${other}.shared.>`] });
    await jsm.consumers.add(`${other}_SHARED`, {
      durable_name: `${prefix}_reader`,
      ack_policy: AckPolicy.Explicit,
    });
    await jsm.consumers.add(`${other}_SHARED`, {
      durable_name: 'keep_me',
      ack_policy: AckPolicy.Explicit,
    });
    const kvm = new Kvm(nc);
    const kv = await kvm.create(`${prefix}_balances`);
    await kv.put('acct1', 'zero');
    await kvm.create(`${other}_balances`);

    try {
      const deleted = await deleteNatsNamespace(testNatsUrl(), prefix);
      expect(deleted.buckets).toEqual([`${prefix}_balances`]);
      expect(deleted.streams).toEqual([`${prefix}_CHAIN`]);
      expect(deleted.consumers).toEqual([`${other}_SHARED/${prefix}_reader`]);

      const names = await streamNames();
      expect(names).not.toContain(`${prefix}_CHAIN`);
      expect(names).not.toContain(`KV_${prefix}_balances`);
      expect(names).toContain(`${other}_SHARED`);
      expect(names).toContain(`KV_${other}_balances`);
      const consumers: string[] = [];
      for await (const info of jsm.consumers.list(`${other}_SHARED`)) consumers.push(info.name);
      expect(consumers).toEqual(['keep_me']);

      expect(await deleteNatsNamespace(testNatsUrl(), prefix)).toEqual({
        streams: [],
        consumers: [],
        buckets: [],
      });
    } finally {
      await deleteNatsNamespace(testNatsUrl(), other);
    }
    expect((await streamNames()).some((name) => name.includes(other))).toBe(false);
  });

  it('refuses an empty prefix', async () => {
    await expect(deleteNatsNamespace(testNatsUrl(), '')).rejects.toThrow(/empty prefix/);
  });
});
