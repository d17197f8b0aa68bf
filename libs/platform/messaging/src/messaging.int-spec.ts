import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  Consumers,
  DeadLetterSchema,
  partitionedConsumer,
  partitionedConsumers,
  SINGLE_PARTITION,
  Events,
  KvBuckets,
  Streams,
  balanceChangedId,
  usageFlushId,
  usageId,
  type BalanceStateChanged,
  type ConsumerDeclaration,
  type UsageRecorded,
} from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { headers } from '@nats-io/transport-node';
import { Registry } from 'prom-client';
import { ConsumerRunner, isEvent, type ConsumedMessage } from './consumer-runner';
import type { DependencyGate } from './dependency-gate';
import { JetStreamConsumers } from './jetstream-consumers';
import { JetStreamPublisher } from './jetstream-publisher';
import { KvMirror } from './kv-mirror';
import { NatsClient } from './nats-client';
import { NatsNamespace } from './nats-namespace';
import { PubAckBatch } from './pub-ack-batch';
import { provisionMessaging } from './provision-messaging';

const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const prefix = `t${randomBytes(5).toString('hex')}`;
const ns = new NatsNamespace(prefix);

// Short waits so the tests never sleep for the real schedule. Confirmed acks here (ledgerUsage
// itself is fire-and-forget); the fire-and-forget mode has its own describe below.
const usageConsumer: ConsumerDeclaration = {
  ...Consumers.ledgerUsage,
  backoffMs: [50],
  maxDeliver: 3,
  ackWaitMs: 5_000,
  concurrency: 2,
  ackConfirmation: 'confirmed',
};
const consumers = [usageConsumer];

let client: NatsClient;
let jsm: JetStreamManager;
let publisher: JetStreamPublisher;
const runners: ConsumerRunner[] = [];

async function until<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let seq = 0;
function usage(account = `acc_${++seq}`): UsageRecorded {
  const windowStart = new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString();
  return {
    id: usageId('gw-1', account, windowStart),
    kind: 'node',
    accountId: account,
    producerId: 'gw-1',
    windowStart,
    windowEnd: windowStart,
    items: [{ network: 'eth-mainnet', method: 'eth_call', calls: 1, cu: 20 }],
    totalCu: 20,
  };
}

function runner(handler: (m: ConsumedMessage) => Promise<void>): ConsumerRunner {
  const r = new ConsumerRunner(usageConsumer, handler, {
    client,
    namespace: ns,
    publisher,
    retryDelayMs: 100,
  });
  runners.push(r);
  r.start();
  return r;
}

async function deadLetters() {
  const letters = [];
  const info = await jsm.streams.info(ns.stream('BILLING'));
  for (let s = info.state.first_seq; s <= info.state.last_seq; s++) {
    // null for a deleted sequence; a failed read throws (a skipped letter would pass silently)
    const m = await jsm.streams.getMessage(ns.stream('BILLING'), { seq: s });
    if (m && m.subject === ns.subject(usageConsumer.deadLetterSubject))
      letters.push(DeadLetterSchema.parse(m.json()));
  }
  return letters;
}

beforeAll(async () => {
  client = new NatsClient({ url: NATS_URL, name: 'messaging-int-spec' });
  jsm = await jetstreamManager(await client.connection());
  publisher = new JetStreamPublisher(client, ns);
  await provisionMessaging(jsm, prefix, { consumers });
});

afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.stop()));
});

afterAll(async () => {
  for await (const stream of jsm.streams.list()) {
    if (stream.config.name.includes(prefix)) await jsm.streams.delete(stream.config.name);
  }
  await client.close();
});

describe('provisioning', () => {
  it('a second run is a no-op', async () => {
    const report = await provisionMessaging(jsm, prefix, { consumers });
    expect(report.length).toBe(
      Object.keys(Streams).length + consumers.length + Object.keys(KvBuckets).length,
    );
    expect(report.filter((entry) => entry.action !== 'unchanged')).toEqual([]);
  });

  it('a changed declaration is updated in place', async () => {
    const changed = { ...usageConsumer, ackWaitMs: 6_000 };
    const report = await provisionMessaging(jsm, prefix, {
      streams: [],
      buckets: [],
      consumers: [changed],
    });
    expect(report).toEqual([
      expect.objectContaining({ kind: 'consumer', action: 'updated', changes: ['ack_wait'] }),
    ]);
    await provisionMessaging(jsm, prefix, { streams: [], buckets: [], consumers });
  });

  it('a partitioned family: new durables start after the acked floor of the old ones, which are deleted', async () => {
    // Its own subject on the WEBHOOK stream, so no other test's consumer sees these messages.
    const family: ConsumerDeclaration = {
      ...Consumers.workerDeliveryJobs,
      durable: 'family-test',
      filterSubject: 'webhook.delivery.requested.v1.family_test',
    };
    const subject = ns.subject(family.filterSubject);
    const stream = ns.stream(family.stream);
    const provision = (declared: ConsumerDeclaration[]) =>
      provisionMessaging(jsm, prefix, { streams: [], buckets: [], consumers: declared });
    // Nothing of the family exists yet: the durable reads the stream from its start.
    await provision([partitionedConsumer(family, SINGLE_PARTITION)]);
    const js = client.jetstream();
    const seqs: number[] = [];
    for (let i = 0; i < 5; i++) seqs.push((await js.publish(subject, `m${i}`)).seq);
    const one = await js.consumers.get(stream, ns.consumer('family-test'));
    const batch = await one.fetch({ max_messages: 2, expires: 2_000 });
    for await (const m of batch) await m.ackAck();
    expect(
      (await jsm.consumers.info(stream, ns.consumer('family-test'))).ack_floor.stream_seq,
    ).toBe(seqs[1]);

    // Two replicas now: both start after what the one durable acked; it is deleted.
    const report = await provision(partitionedConsumers(family, 2));
    expect(report).toEqual([
      expect.objectContaining({ action: 'created', changes: [`starts after ${seqs[1]}`] }),
      expect.objectContaining({ action: 'created', changes: [`starts after ${seqs[1]}`] }),
      expect.objectContaining({
        action: 'deleted',
        name: `${stream}/${ns.consumer('family-test')}`,
      }),
    ]);
    for (const i of [0, 1]) {
      const info = await jsm.consumers.info(stream, ns.consumer(`family-test-p${i}of2`));
      expect(info.num_pending).toBe(3);
    }
    // Provisioning again changes nothing.
    const again = await provision(partitionedConsumers(family, 2));
    expect(again.map((e) => e.action)).toEqual(['unchanged', 'unchanged']);
    for (const i of [0, 1]) await jsm.consumers.delete(stream, ns.consumer(`family-test-p${i}of2`));
  });

  it('a partitioned family: a durable whose subjects change with the count starts again from the family floor', async () => {
    // As the ledger's usage durable (ADR 0105 step 3): every subject with one partition; with
    // two, only the unpartitioned subjects, beside one durable per partition's subject.
    const base: ConsumerDeclaration = {
      ...Consumers.workerDeliveryJobs,
      durable: 'family-narrow',
      filterSubject: 'webhook.famnarrow.>',
    };
    const narrowed = {
      ...base,
      filterSubject: 'webhook.famnarrow.v1.*',
      partitionOf: 'family-narrow',
    };
    const partitions = partitionedConsumers(base, 2, (i) => `webhook.famnarrow.v2.u${i}`);
    const stream = ns.stream(base.stream);
    const provision = (declared: ConsumerDeclaration[]) =>
      provisionMessaging(jsm, prefix, { streams: [], buckets: [], consumers: declared });
    await provision([partitionedConsumer(base, SINGLE_PARTITION)]);
    const js = client.jetstream();
    const publish = async (subject: string) => (await js.publish(ns.subject(subject), 'm')).seq;
    const first = await publish('webhook.famnarrow.v2.u1');
    await publish('webhook.famnarrow.v1.a');
    const one = await js.consumers.get(stream, ns.consumer('family-narrow'));
    for await (const m of await one.fetch({ max_messages: 1, expires: 2_000 })) await m.ackAck();

    // Two partitions: the narrowed durable starts after the family floor, not where it was.
    const two = await provision([narrowed, ...partitions]);
    expect(two[0]).toEqual(
      expect.objectContaining({
        action: 'updated',
        changes: ['filter_subject (recreated)', `starts after ${first}`],
      }),
    );
    const pending = async (durable: string) =>
      (await jsm.consumers.info(stream, ns.consumer(durable))).num_pending;
    expect(await pending('family-narrow')).toBe(1);
    expect(await pending('family-narrow-p0of2')).toBe(0);
    expect(await pending('family-narrow-p1of2')).toBe(0);
    const late = await publish('webhook.famnarrow.v2.u0');

    // Back to one partition before partition 0 acked its message: the widened durable starts
    // after the family's floor again, so that message is read (a copy is harmless, lost is not).
    const back = await provision([partitionedConsumer(base, SINGLE_PARTITION)]);
    expect(back[0]).toEqual(expect.objectContaining({ action: 'updated' }));
    expect(back.filter((e) => e.action === 'deleted')).toHaveLength(2);
    const info = await jsm.consumers.info(stream, ns.consumer('family-narrow'));
    expect(info.config.filter_subject).toBe(ns.subject('webhook.famnarrow.>'));
    expect(info.num_pending).toBe(2);
    expect(late).toBeGreaterThan(first);
    await jsm.consumers.delete(stream, ns.consumer('family-narrow'));
  });
});

describe('JetStreamPublisher', () => {
  it('stores a message once when published twice with the same id', async () => {
    const event = usage();
    const first = await publisher.publish(Events.usageRecorded, event);
    const second = await publisher.publish(Events.usageRecorded, event);
    expect(first.duplicate).toBe(false);
    expect(second).toEqual({ ...first, duplicate: true });
    const stored = await jsm.streams.getMessage(ns.stream('BILLING'), {
      last_by_subj: ns.subject(Events.usageRecorded.subjectOf(event)),
    });
    expect(stored?.header.get('Nats-Msg-Id')).toBe(event.id);
    expect(stored?.seq).toBe(first.seq);
    // Drain it so the consumer tests start clean.
    const seen: string[] = [];
    runner(async (m) => void seen.push(m.msgId!));
    await until(() => seen.length === 1);
  });

  it('refuses an invalid payload before sending it', async () => {
    await expect(
      publisher.publish(Events.usageRecorded, { ...usage(), totalCu: 1 }),
    ).rejects.toMatchObject({ code: 'invalid_event_payload', retryable: false });
  });
});

describe('ConsumerRunner', () => {
  it('acks a handled message and hands over the validated payload', async () => {
    const event = usage();
    const got: UsageRecorded[] = [];
    runner(async (m) => {
      if (isEvent(m, Events.usageRecorded)) got.push(m.payload);
    });
    await publisher.publish(Events.usageRecorded, event);
    await until(() => got.length === 1);
    expect(got[0]).toEqual(event);
    await until(
      async () =>
        (await jsm.consumers.info(ns.stream('BILLING'), ns.consumer(usageConsumer.durable)))
          .num_ack_pending === 0,
    );
  });

  it('redelivers after a retryable DomainError', async () => {
    const event = usage();
    const deliveries: number[] = [];
    runner(async (m) => {
      deliveries.push(m.deliveryCount);
      if (m.deliveryCount === 1) throw new DomainError('ledger_busy', 'unavailable');
    });
    await publisher.publish(Events.usageRecorded, event);
    await until(() => deliveries.length === 2);
    expect(deliveries).toEqual([1, 2]);
  });

  it('dead-letters a non-retryable DomainError at once (term + DLQ copy)', async () => {
    const event = usage();
    let calls = 0;
    runner(async () => {
      calls++;
      throw new DomainError('account_unknown', 'not_found', 'no such account');
    });
    await publisher.publish(Events.usageRecorded, event);
    const letter = await until(async () => (await deadLetters()).find((l) => l.msgId === event.id));
    expect(letter).toMatchObject({
      consumer: usageConsumer.durable,
      stream: 'BILLING',
      subject: Events.usageRecorded.subjectOf(event),
      reason: 'permanent_error',
      error: { code: 'account_unknown', message: 'no such account' },
      deliveryCount: 1,
    });
    expect(JSON.parse(letter.data)).toEqual(event);
    await new Promise((resolve) => setTimeout(resolve, 300)); // longer than the backoff: no redelivery
    expect(calls).toBe(1);
    // The server took the term: nothing is waiting for an ack or a redelivery.
    const info = await jsm.consumers.info(ns.stream('BILLING'), ns.consumer(usageConsumer.durable));
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_redelivered).toBe(0);
  });

  it('dead-letters a payload that fails the schema without calling the handler', async () => {
    let calls = 0;
    runner(async () => void calls++);
    const bad = { ...usage(), totalCu: 999 };
    await publisher.publishJson(Events.usageRecorded.subjectOf(bad), bad, bad.id);
    const letter = await until(async () => (await deadLetters()).find((l) => l.msgId === bad.id));
    expect(letter.reason).toBe('invalid_payload');
    expect(letter.error.message).toMatch(/totalCu/);
    expect(calls).toBe(0);
  });

  it('takes a usage flush part through its compiled check, and leaves the rest to the schema (ADR 0104)', async () => {
    const payloads: unknown[] = [];
    runner(async (m) => void payloads.push(m.payload));
    const windowStart = new Date(Date.UTC(2026, 0, 2, 0, 0, ++seq)).toISOString();
    const flush = {
      id: usageFlushId('gw-fast', windowStart, 0),
      producerId: 'gw-fast',
      windowStart,
      windowEnd: new Date(Date.parse(windowStart) + 1_000).toISOString(),
      part: 0,
      parts: 1,
      accounts: [
        {
          kind: 'node' as const,
          accountId: 'acc_fast',
          items: [{ network: 'eth-mainnet', method: 'eth_call', calls: 2, cu: 40 }],
          totalCu: 40,
        },
      ],
    };
    // Valid: handled as sent.
    await publisher.publish(Events.usageFlushed, flush);
    await until(() => payloads.length === 1 || undefined);
    expect(payloads[0]).toEqual(flush);
    // A key the schema strips: the schema parses it (the handler gets it without the key).
    const extra = {
      ...flush,
      id: usageFlushId('gw-fast', windowStart, 1),
      part: 1,
      parts: 2,
      note: 'x',
    };
    await publisher.publishJson(Events.usageFlushed.subjectOf(extra), extra, extra.id);
    await until(() => payloads.length === 2 || undefined);
    expect(payloads[1]).not.toHaveProperty('note');
    // Invalid: dead-lettered with the schema's reason, never handled.
    const bad = {
      ...flush,
      id: usageFlushId('gw-fast', windowStart, 2),
      part: 2,
      parts: 3,
      accounts: [{ ...flush.accounts[0]!, totalCu: 41 }],
    };
    await publisher.publishJson(Events.usageFlushed.subjectOf(bad), bad, bad.id);
    const letter = await until(async () => (await deadLetters()).find((l) => l.msgId === bad.id));
    expect(letter.reason).toBe('invalid_payload');
    expect(letter.error.message).toMatch(
      /^accounts\.0: totalCu must equal the sum of items\[\]\.cu/,
    );
    expect(payloads).toHaveLength(2);
  });

  it('dead-letters a message still failing at maxDeliver', async () => {
    const event = usage();
    const deliveries: number[] = [];
    runner(async (m) => {
      deliveries.push(m.deliveryCount);
      throw new Error('still broken');
    });
    await publisher.publish(Events.usageRecorded, event);
    const letter = await until(async () => (await deadLetters()).find((l) => l.msgId === event.id));
    expect(letter).toMatchObject({
      reason: 'max_deliver',
      deliveryCount: 3,
      error: { code: 'unexpected_error', message: 'still broken' },
    });
    expect(deliveries).toEqual([1, 2, 3]);
  });

  it('holds its messages through a dependency outage longer than maxDeliver × backoff: at most one attempt spent, none dead-lettered', async () => {
    // A dependency that is down until `up()` (what DbJobGate says of Postgres).
    let down = true;
    let up!: () => void;
    const answered = new Promise<void>((resolve) => (up = resolve));
    const gate: DependencyGate = {
      outage: async (error) => down && (error as Error).message === 'db down',
      whenOpen: () => (down ? answered : Promise.resolve()),
    };
    const failures: string[] = [];
    const handled: Array<[string, number]> = [];
    const r = new ConsumerRunner(
      usageConsumer,
      async (m) => {
        const id = (m.payload as UsageRecorded).id;
        if (down) {
          failures.push(id);
          throw new Error('db down');
        }
        handled.push([id, m.deliveryCount]);
      },
      { client, namespace: ns, publisher, retryDelayMs: 100, gates: [gate] },
    );
    runners.push(r);
    r.start();
    const events = Array.from({ length: 6 }, () => usage());
    for (const event of events) await publisher.publish(Events.usageRecorded, event);
    await until(() => failures.length > 0 || undefined);
    // 3 deliveries × 50 ms would have dead-lettered every one by now.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(handled).toEqual([]);
    down = false;
    up();
    await until(() => handled.length === events.length || undefined);
    expect(handled.map(([id]) => id).sort()).toEqual(events.map((e) => e.id).sort());
    // Held, not redelivered: each on its first delivery, or its second if the server had sent
    // it toward the pull the pause closed (back after ack_wait). Never three: maxDeliver.
    expect(Math.max(...handled.map(([, count]) => count))).toBeLessThanOrEqual(2);
    const letters = await deadLetters();
    expect(letters.filter((l) => events.some((e) => e.id === l.msgId))).toEqual([]);
    await until(async () => {
      const info = await jsm.consumers.info(
        ns.stream('BILLING'),
        ns.consumer(usageConsumer.durable),
      );
      return (info.num_ack_pending === 0 && info.num_pending === 0) || undefined;
    });
  });

  it('stop() waits for the in-flight handler, which still acks', async () => {
    const event = usage();
    let release!: () => void;
    const started = new Promise<void>((resolve) => {
      const r = runner(async () => {
        resolve();
        await new Promise<void>((done) => (release = done));
      });
      void r;
    });
    await publisher.publish(Events.usageRecorded, event);
    await started;
    const r = runners.at(-1)!;
    let stopped = false;
    const stopping = r.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stopped).toBe(false);
    release();
    await stopping;
    const info = await jsm.consumers.info(ns.stream('BILLING'), ns.consumer(usageConsumer.durable));
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_pending).toBe(0);
  });

  it('keeps no hold of the decoded payload while the handler waits: a handler keeping only `data` lets it die young', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const event = usage();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let alive: WeakRef<object> | undefined;
    let kept: Uint8Array | undefined;
    // Not async: this handler's own frame holds nothing while it waits (the ledger's does the same).
    runner((m) => {
      alive = new WeakRef(m.payload as object);
      kept = m.data;
      return gate;
    });
    await publisher.publish(Events.usageRecorded, event);
    await until(() => alive !== undefined);
    await new Promise((resolve) => setImmediate(resolve));
    try {
      gc();
      expect(alive!.deref()).toBeUndefined();
      expect(JSON.parse(new TextDecoder().decode(kept))).toEqual(event);
    } finally {
      release();
    }
    await until(
      async () =>
        (await jsm.consumers.info(ns.stream('BILLING'), ns.consumer(usageConsumer.durable)))
          .num_ack_pending === 0,
    );
  });
});

describe('ConsumerRunner with fire-and-forget acks', () => {
  // Own prefix (and so own stream and durable): nothing left over from the tests above.
  const ffPrefix = `${prefix}ff`;
  const ffNs = new NatsNamespace(ffPrefix);
  // Short ack wait: an ack that never reached the server would show up as a redelivery soon.
  const ffConsumer: ConsumerDeclaration = {
    ...usageConsumer,
    ackWaitMs: 1_000,
    ackConfirmation: 'fire-and-forget',
  };
  let ffPublisher: JetStreamPublisher;

  beforeAll(async () => {
    await provisionMessaging(jsm, ffPrefix, {
      streams: [Streams.BILLING],
      consumers: [ffConsumer],
      buckets: [],
    });
    ffPublisher = new JetStreamPublisher(client, ffNs);
  });

  function ffRunner(handler: (m: ConsumedMessage) => Promise<void>): ConsumerRunner {
    const r = new ConsumerRunner(ffConsumer, handler, {
      client,
      namespace: ffNs,
      publisher: ffPublisher,
      retryDelayMs: 100,
    });
    runners.push(r);
    r.start();
    return r;
  }

  const ffInfo = () =>
    jsm.consumers.info(ffNs.stream('BILLING'), ffNs.consumer(ffConsumer.durable));
  /**
   * Until the server holds no delivered message unacked: only such a message can come again
   * (after the ack wait), so from then on nothing is redelivered. An ack that never reached it
   * keeps its message pending until the redelivery, which the test then sees.
   */
  const allAcked = () =>
    until(async () => (await ffInfo()).num_ack_pending === 0, 10 * ffConsumer.ackWaitMs);

  it('acks without waiting for confirmation, and an acked message is not redelivered', async () => {
    const events = [usage(), usage(), usage()];
    const deliveries = new Map<string, number[]>();
    ffRunner(async (m) => {
      if (isEvent(m, Events.usageRecorded))
        deliveries.set(m.payload.id, [...(deliveries.get(m.payload.id) ?? []), m.deliveryCount]);
    });
    for (const event of events) await ffPublisher.publish(Events.usageRecorded, event);
    await until(() => deliveries.size === events.length);
    await allAcked();
    expect([...deliveries.values()]).toEqual([[1], [1], [1]]);
    const info = await ffInfo();
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_redelivered).toBe(0);
  });

  it('still naks when the handler fails: redelivered after the backoff, then acked once', async () => {
    const event = usage();
    const deliveries: number[] = [];
    ffRunner(async (m) => {
      deliveries.push(m.deliveryCount);
      if (m.deliveryCount === 1) throw new DomainError('ledger_busy', 'unavailable');
    });
    await ffPublisher.publish(Events.usageRecorded, event);
    await until(() => deliveries.length === 2);
    await allAcked();
    expect(deliveries).toEqual([1, 2]);
    expect((await ffInfo()).num_ack_pending).toBe(0);
  });

  it('acks of handlers that finish in the same turn all arrive, also when the runner stops right away', async () => {
    const events = Array.from({ length: 20 }, () => usage());
    const handled: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // All 20 in flight at once (the durable's max_ack_pending is 32).
    const runner = new ConsumerRunner(
      { ...ffConsumer, concurrency: events.length },
      async (m) => {
        if (!isEvent(m, Events.usageRecorded)) return;
        await gate;
        handled.push(m.payload.id);
      },
      { client, namespace: ffNs, publisher: ffPublisher, retryDelayMs: 100 },
    );
    runners.push(runner);
    runner.start();
    for (const event of events) await ffPublisher.publish(Events.usageRecorded, event);
    await until(async () => (await ffInfo()).num_ack_pending === events.length);
    // Every handler finishes in the same turn; the runner is stopped right away.
    release();
    await runner.stop();
    expect(handled).toHaveLength(events.length);
    await allAcked();
    const info = await ffInfo();
    expect(info.num_redelivered).toBe(0);
    expect(info.num_pending).toBe(0);
  });
});

describe('ConsumerRunner with large messages (pullBatch)', () => {
  // A backlog of ~300 KB usage parts through a handler that holds the event loop, as a ledger
  // transaction does. Pulled as `concurrency` messages, the server writes ~77 MB ahead of the
  // reads, past its 64 MiB max_pending: it cuts the connection as a slow consumer and the
  // parts come back only after ack_wait. Pulled `pullBatch` at a time, each is delivered once.
  const bigPrefix = `${prefix}big`;
  const bigNs = new NatsNamespace(bigPrefix);
  const bigConsumer: ConsumerDeclaration = {
    ...Consumers.ledgerUsage,
    // Shorter than the ledger's 30 s, so a cut connection shows within the test; long enough
    // that a part waiting its turn behind `pullBatch` busy ones on a loaded host is not
    // redelivered (at 3 s, CI saw a part delivered twice).
    ackWaitMs: 10_000,
    maxDeliver: 5,
    ackConfirmation: 'fire-and-forget',
  };

  it('a backlog of large parts is delivered once each, the connection kept', async () => {
    expect(bigConsumer.concurrency).toBe(256);
    expect(bigConsumer.pullBatch! * 256 * 1024).toBeLessThanOrEqual(16 * 1024 * 1024);
    await provisionMessaging(jsm, bigPrefix, {
      streams: [Streams.BILLING],
      consumers: [bigConsumer],
      buckets: [],
    });
    const bigClient = new NatsClient({ url: NATS_URL, name: 'messaging-int-spec-big' });
    await bigClient.connection();
    const bigPublisher = new JetStreamPublisher(bigClient, bigNs);
    const parts = 320;
    const accounts = Array.from({ length: 2_600 }, (_, a) => ({
      kind: 'node' as const,
      accountId: `acc_big_${String(a).padStart(6, '0')}`,
      items: [{ network: 'eth-mainnet', method: 'eth_getBalance', calls: 3, cu: 60 }],
      totalCu: 60,
    }));
    for (let p = 0; p < parts; p += 1) {
      const windowStart = new Date(Date.UTC(2026, 0, 3, 0, 0, 0, p)).toISOString();
      const part = {
        id: usageFlushId('gw-big', windowStart, 0),
        producerId: 'gw-big',
        windowStart,
        windowEnd: windowStart,
        part: 0,
        parts: 1,
        accounts,
      };
      // Valid parts (the consumer checks them); not validated again on the way in.
      await bigPublisher.publishJson(Events.usageFlushed.subjectOf(part), part, part.id);
    }
    const deliveries = new Map<number, number>();
    let handled = 0;
    const r = new ConsumerRunner(
      bigConsumer,
      async (m) => {
        deliveries.set(m.streamSequence, (deliveries.get(m.streamSequence) ?? 0) + 1);
        // Every 16th message holds the event loop for 400 ms (a transaction's work).
        if ((handled += 1) % 16 === 1) {
          const busyUntil = Date.now() + 400;
          while (Date.now() < busyUntil);
        }
      },
      { client: bigClient, namespace: bigNs, publisher: bigPublisher, retryDelayMs: 100 },
    );
    runners.push(r);
    r.start();
    try {
      await until(() => deliveries.size === parts || undefined, 60_000);
      // Until every delivered part is acked: a part the server had sent and the cut connection
      // dropped stays pending until its ack wait and then comes again (a redelivery, seen
      // below); once none is pending, nothing can come again.
      const bigInfo = () =>
        jsm.consumers.info(bigNs.stream('BILLING'), bigNs.consumer(bigConsumer.durable));
      await until(async () => (await bigInfo()).num_ack_pending === 0, 6 * bigConsumer.ackWaitMs);
      const info = await bigInfo();
      expect(info.num_redelivered).toBe(0);
      expect([...deliveries.values()].every((n) => n === 1)).toBe(true);
      expect(info.num_ack_pending).toBe(0);
    } finally {
      await r.stop();
      await bigClient.close();
    }
  }, 120_000);
});

describe('KvMirror', () => {
  it('loads the snapshot, then follows puts and deletes', async () => {
    const kv = await new Kvm(client.jetstream()).open(ns.bucket(KvBuckets.balanceState.name));
    const state = (accountId: string, version: number): BalanceStateChanged => ({
      id: balanceChangedId(accountId, version),
      accountId,
      version,
      state: 'ok',
      exhaustedSince: null,
      allowanceCu: 50_000,
      purchasedCu: 0,
      pendingTopUpCu: 0,
      allowanceResetsAt: null,
      planId: 'free',
      accountType: 'individual',
      nodeOwner: false,
      caps: {
        nodeRps: 20,
        accessTokens: 2,
        webhooks: {
          activeWebhooks: 1,
          addressesPerWebhook: 10,
          addressesPerAccount: 10,
          eventsPerSecond: 1,
          eventsBurst: 12,
          inlineAddresses: 1000,
          listRefs: 10,
          addressLists: 50,
          addressesPerList: 100000,
        },
        audit: { checksPerPeriod: 0, requestsPerSecond: 0 },
      },
      at: '2026-01-01T00:00:00.000Z',
    });
    await kv.put('acc_a', JSON.stringify(state('acc_a', 1)));
    await kv.put('acc_b', JSON.stringify(state('acc_b', 1)));
    await kv.put('acc_a', JSON.stringify(state('acc_a', 2)));
    await kv.put('acc_bad', JSON.stringify({ nope: true }));

    const mirror = new KvMirror(client, ns, {
      bucket: KvBuckets.balanceState.name,
      schema: Events.balanceStateChanged.schema,
      retryDelayMs: 100,
    });
    mirror.start();
    try {
      await mirror.initialized;
      await mirror.check();
      expect(mirror.get('acc_a')?.version).toBe(2);
      expect(mirror.get('acc_b')?.version).toBe(1);
      expect(mirror.has('acc_bad')).toBe(false);

      await kv.put(
        'acc_b',
        JSON.stringify({
          ...state('acc_b', 2),
          state: 'exhausted',
          exhaustedSince: '2026-01-01T00:01:00.000Z',
        }),
      );
      await until(() => mirror.get('acc_b')?.state === 'exhausted');
      await kv.delete('acc_a');
      await until(() => !mirror.has('acc_a'));
      expect(mirror.size).toBe(1);
    } finally {
      await mirror.stop();
    }
  });

  it('an empty bucket counts as loaded at once', async () => {
    const mirror = new KvMirror(client, ns, {
      bucket: KvBuckets.webhookStatus.name,
      schema: Events.balanceStateChanged.schema,
    });
    mirror.start();
    await mirror.initialized;
    expect(mirror.size).toBe(0);
    await mirror.stop();
  });

  it('a stop while the watch is being opened ends it (an app closed just after it started)', async () => {
    // Stops at every point of the start-up: before the connection, while the bucket is being
    // opened, while the watch is being created, after the snapshot.
    for (let delayMs = 0; delayMs <= 40; delayMs += 2) {
      const mirror = new KvMirror(client, ns, {
        bucket: KvBuckets.balanceState.name,
        schema: Events.balanceStateChanged.schema,
        retryDelayMs: 100,
      });
      mirror.start();
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        mirror.stop().then(() => 'stopped'),
        new Promise((resolve) => (timer = setTimeout(() => resolve('still running'), 3_000))),
      ]);
      clearTimeout(timer);
      expect({ delayMs, outcome }).toEqual({ delayMs, outcome: 'stopped' });
    }
  });
});

describe('NatsClient', () => {
  it('does not block or throw while the server is down, and reports it', async () => {
    const down = new NatsClient({ url: 'nats://127.0.0.1:1', name: 'down', retryDelayMs: 50 });
    down.start();
    await expect(down.check()).rejects.toThrow(/not connected/);
    expect(() => down.require()).toThrow(
      expect.objectContaining({ code: 'messaging_unavailable', retryable: true }),
    );
    await expect(
      new JetStreamPublisher(down, ns).publish(Events.usageRecorded, usage()),
    ).rejects.toMatchObject({ code: 'messaging_unavailable' });
    await down.close();
  });

  it('answers the readiness check when connected', async () => {
    await expect(client.check()).resolves.toBeUndefined();
  });
});

describe('PubAckBatch', () => {
  const batch = new PubAckBatch();
  afterAll(() => batch.close());

  it('settles each message by its own PubAck: stored ones resolve, a refused one fails alone', async () => {
    const nc = await client.connection();
    const bucket = ns.bucket(KvBuckets.revokedCredentials.name);
    const refused = headers();
    refused.set('Nats-Expected-Stream', 'NOT_THIS_STREAM');
    const outcomes: (string | undefined)[] = [];
    await new Promise<void>((resolve) => {
      let open = 3;
      batch.publish(
        nc,
        [
          { subject: `$KV.${bucket}.pab_a`, data: 'a' },
          { subject: `$KV.${bucket}.pab_b`, data: 'b', headers: refused },
          { subject: `$KV.${bucket}.pab_c`, data: 'c' },
        ],
        5_000,
        (index, error) => {
          outcomes[index] = error?.message;
          if ((open -= 1) === 0) resolve();
        },
      );
    });
    expect(outcomes[0]).toBeUndefined();
    expect(outcomes[1]).toMatch(/^refused: /);
    expect(outcomes[2]).toBeUndefined();
    const kv = await new Kvm(client.jetstream()).open(bucket);
    expect((await kv.get('pab_a'))?.string()).toBe('a');
    expect(await kv.get('pab_b')).toBeNull();
    expect(batch.inFlight).toBe(0);
    await expect(
      batch.publishAll(nc, [{ subject: `$KV.${bucket}.pab_d`, data: 'd' }], 5_000),
    ).resolves.toBeUndefined();
  });

  it('nothing takes the subject: fails at once (503); a silent listener: fails on the timeout; close fails what waits', async () => {
    const nc = await client.connection();
    await expect(
      batch.publishAll(nc, [{ subject: `${prefix}-nobody.x`, data: '1' }], 5_000),
    ).rejects.toThrow(/no stream answered/);
    const silent = nc.subscribe(`${prefix}-silent.>`);
    try {
      await expect(
        batch.publishAll(nc, [{ subject: `${prefix}-silent.x`, data: '1' }], 100),
      ).rejects.toThrow('no PubAck within 100 ms');
      const waiting = batch.publishAll(nc, [{ subject: `${prefix}-silent.y`, data: '1' }], 60_000);
      expect(batch.inFlight).toBe(1);
      batch.close();
      await expect(waiting).rejects.toThrow('publisher closed');
      expect(batch.inFlight).toBe(0);
    } finally {
      silent.unsubscribe();
    }
  });
});

describe('ConsumerRunner when its consumer or stream disappears (NATS lost its store)', () => {
  // A namespace of its own: deleting its stream leaves the other tests' alone.
  const lostNs = new NatsNamespace(`t${randomBytes(5).toString('hex')}`);
  const provision = () =>
    provisionMessaging(jsm, lostNs.prefix, {
      streams: [Streams.BILLING],
      buckets: [],
      consumers: [usageConsumer],
    });
  const lines: { level: string; msg: string; obj: object }[] = [];
  const log = (level: string) => (obj: object, msg?: string) =>
    lines.push({ level, msg: msg ?? '', obj });
  const logger = { info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') };
  const registry = new Registry();
  let consumers: JetStreamConsumers;
  const handled: string[] = [];

  const attached = async () =>
    (await registry.getSingleMetric('messaging_consumer_attached')?.get())?.values[0]?.value;
  const warnings = () => lines.filter((l) => l.level === 'warn');
  async function flows(): Promise<void> {
    const recorded = usage();
    await new JetStreamPublisher(client, lostNs).publish(Events.usageRecorded, recorded);
    await until(() => handled.includes(recorded.id));
  }

  beforeAll(async () => {
    await provision();
    consumers = new JetStreamConsumers(
      { client, namespace: lostNs, publisher, logger, retryDelayMs: 100 },
      registry,
    );
    consumers.run(usageConsumer, async (m) => {
      if (isEvent(m, Events.usageRecorded)) handled.push(m.payload.id);
    });
    await until(async () => (await attached()) === 1);
    await flows();
  });

  afterAll(async () => {
    await consumers.stopAll();
    await jsm.streams.delete(lostNs.stream('BILLING')).catch(() => undefined);
  });

  it.each([
    [
      'consumer',
      () => jsm.consumers.delete(lostNs.stream('BILLING'), lostNs.consumer(usageConsumer.durable)),
    ],
    ['stream', () => jsm.streams.delete(lostNs.stream('BILLING'))],
  ])(
    'its %s deleted: attached 0 and one warning; re-created: 1 again and messages flow',
    async (_, remove) => {
      lines.length = 0;
      await remove();
      await until(async () => (await attached()) === 0);
      await until(() => warnings().length > 0);
      expect(warnings()).toEqual([
        expect.objectContaining({
          msg: 'consumer detached; re-attaching',
          obj: expect.objectContaining({ consumer: usageConsumer.durable }),
        }),
      ]);
      // Retried every retryDelayMs while it is missing (at debug, not one warning a retry).
      await until(() => lines.filter((l) => l.level === 'debug').length >= 2);
      await provision();
      await until(async () => (await attached()) === 1);
      await flows();
      expect(warnings()).toHaveLength(1);
      expect(lines.filter((l) => l.level === 'info' && l.msg === 'consuming')).toHaveLength(1);
    },
  );
});
