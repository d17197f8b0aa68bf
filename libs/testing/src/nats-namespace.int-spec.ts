import { AckPolicy, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  deleteNatsNamespace,
  sweepNatsNamespace,
  testNatsUrl,
  uniqueNatsPrefix,
  type NatsNamespaceCleanupApi,
} from './nats-namespace';

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

  it('tolerates streams and consumers another cleanup deletes between listing and use', async () => {
    // Another test file cleans its namespace on the same server while this cleanup runs: each of
    // its streams/consumers can vanish after this cleanup listed it. The interleavings are forced
    // by running the other client's deletes inside this cleanup's own JetStream calls.
    const prefix = uniqueNatsPrefix();
    const other = uniqueNatsPrefix();
    const jsm = await jetstreamManager(nc);
    const durable = (name: string) => ({ durable_name: name, ack_policy: AckPolicy.Explicit });
    const addStream = (name: string) =>
      jsm.streams.add({ name, subjects: [`${name.replace('_', '.')}.>`] });

    await addStream(`${prefix}_CHAIN`);
    await addStream(`${prefix}_RACED`); // deleted by someone else after it was listed
    await addStream(`${other}_GONE`); // deleted before its consumers are listed
    await jsm.consumers.add(`${other}_GONE`, durable(`${prefix}_gone`));
    await addStream(`${other}_DROPPED`); // deleted after its consumers were listed
    await jsm.consumers.add(`${other}_DROPPED`, durable(`${prefix}_dropped`));
    await addStream(`${other}_SHARED`); // stays; one of our durables on it vanishes, one stays
    await jsm.consumers.add(`${other}_SHARED`, durable(`${prefix}_vanishing`));
    await jsm.consumers.add(`${other}_SHARED`, durable(`${prefix}_reader`));
    await jsm.consumers.add(`${other}_SHARED`, durable('keep_me'));
    await new Kvm(nc).create(`${prefix}_balances`);

    const racing: NatsNamespaceCleanupApi = {
      streams: {
        async *names() {
          const names: string[] = [];
          for await (const name of jsm.streams.names()) names.push(name);
          await jsm.streams.delete(`${prefix}_RACED`);
          await jsm.streams.delete(`${other}_GONE`);
          yield* names;
        },
        delete: (stream) => jsm.streams.delete(stream),
      },
      consumers: {
        async *list(stream) {
          const consumers: { name: string }[] = [];
          for await (const info of jsm.consumers.list(stream)) consumers.push(info);
          if (stream === `${other}_DROPPED`) await jsm.streams.delete(stream);
          if (stream === `${other}_SHARED`)
            await jsm.consumers.delete(stream, `${prefix}_vanishing`);
          yield* consumers;
        },
        delete: (stream, consumer) => jsm.consumers.delete(stream, consumer),
      },
    };

    try {
      expect(await sweepNatsNamespace(racing, prefix)).toEqual({
        streams: [`${prefix}_CHAIN`],
        consumers: [`${other}_SHARED/${prefix}_reader`],
        buckets: [`${prefix}_balances`],
      });
      const names = await streamNames();
      expect(names.filter((name) => name.includes(prefix))).toEqual([]);
      const consumers: string[] = [];
      for await (const info of jsm.consumers.list(`${other}_SHARED`)) consumers.push(info.name);
      expect(consumers).toEqual(['keep_me']);
    } finally {
      await deleteNatsNamespace(testNatsUrl(), other);
    }
  });

  it('refuses an empty prefix', async () => {
    await expect(deleteNatsNamespace(testNatsUrl(), '')).rejects.toThrow(/empty prefix/);
  });
});
