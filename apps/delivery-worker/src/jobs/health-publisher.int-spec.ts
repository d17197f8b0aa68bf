import { Streams, type DeliveryHealth } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { NatsClient, NatsNamespace, provisionMessaging } from '@meridian/platform-messaging';
import { deleteNatsNamespace, testNatsUrl, uniqueNatsPrefix } from '@meridian/testing';
import { DeliverPolicy, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { HealthPublisher } from './health-publisher';

/** The batched DeliveryHealth publisher against a real NATS JetStream. */
describe('HealthPublisher (batches, each caller settled by its own PubAck)', () => {
  const prefix = uniqueNatsPrefix();
  const namespace = new NatsNamespace(prefix);
  const client = new NatsClient({ url: testNatsUrl(), name: `health-publisher-${prefix}` });
  /** A namespace where no stream was provisioned. */
  const bare = uniqueNatsPrefix();
  let jsm: JetStreamManager;
  const publishers: HealthPublisher[] = [];

  const publisherOf = (ns: NatsNamespace, timeoutMs?: number) => {
    const p = new HealthPublisher(client, ns, timeoutMs);
    publishers.push(p);
    return p;
  };

  let seq = 0;
  const health = (): DeliveryHealth => {
    seq += 1;
    return {
      id: `dj_wh_1_ev_${seq}_unconfirmed:1`,
      webhookId: 'wh_1',
      accountId: 'acc_1',
      eventId: `ev_${seq}`,
      phase: 'unconfirmed',
      attempt: 1,
      outcome: 'success',
      billed: true,
      final: true,
      statusCode: 200,
      durationMs: 3,
      at: new Date().toISOString(),
    };
  };

  /** The Nats-Msg-Ids the WEBHOOK stream holds (only health events are published to it here). */
  async function stored(): Promise<string[]> {
    await client.connection();
    const stream = namespace.stream(Streams.WEBHOOK.name);
    const total = (await jsm.streams.info(stream)).state.messages;
    const ids: string[] = [];
    if (total === 0) return ids;
    const consumer = await client
      .jetstream()
      .consumers.get(stream, { deliver_policy: DeliverPolicy.All });
    const batch = await consumer.fetch({ max_messages: total, expires: 2_000 });
    for await (const m of batch) {
      ids.push(m.headers?.get('Nats-Msg-Id') ?? '');
      if (ids.length === total) break;
    }
    return ids;
  }

  beforeAll(async () => {
    jsm = await jetstreamManager(await client.connection());
    await provisionMessaging(jsm, prefix, {
      streams: [Streams.WEBHOOK],
      consumers: [],
      buckets: [],
    });
  });

  afterAll(async () => {
    for (const p of publishers) await p.close();
    await client.close();
    await deleteNatsNamespace(testNatsUrl(), prefix).catch(() => undefined);
  });

  it('50 events of one turn: each caller resolves once its own event is stored; a repeated id is stored once', async () => {
    const publisher = publisherOf(namespace);
    const events = Array.from({ length: 50 }, health);
    await Promise.all(events.map((e) => publisher.publish(e)));
    expect(publisher.inFlight).toBe(0);
    expect((await stored()).sort()).toEqual(events.map((e) => e.id).sort());

    // A redelivered job publishes its outcome again under the same id: confirmed, not stored.
    await expect(publisher.publish(events[0]!)).resolves.toBeUndefined();
    expect(await stored()).toHaveLength(50);
  });

  it('no stream takes the subject: every caller of the batch fails, retryable', async () => {
    const publisher = publisherOf(new NatsNamespace(bare));
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => publisher.publish(health())),
    );
    for (const r of results) {
      expect(r.status).toBe('rejected');
      const error = (r as PromiseRejectedResult).reason;
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ code: 'messaging_unavailable', retryable: true });
    }
    expect(publisher.inFlight).toBe(0);
  });

  it('no PubAck within the timeout (a listener that is not a stream): the batch fails, retryable', async () => {
    const other = uniqueNatsPrefix();
    const nc = await client.connection();
    // A plain subscriber: the server sees a responder, so no "no responders" status comes back.
    const silent = nc.subscribe(`${other}.>`);
    try {
      const publisher = publisherOf(new NatsNamespace(other), 200);
      const started = Date.now();
      const results = await Promise.allSettled([
        publisher.publish(health()),
        publisher.publish(health()),
      ]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      expect((results[0] as PromiseRejectedResult).reason).toMatchObject({
        code: 'messaging_unavailable',
        retryable: true,
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      expect(publisher.inFlight).toBe(0);
    } finally {
      silent.unsubscribe();
    }
  });

  it('refuses an invalid event before sending it (a producer bug), not retryable', async () => {
    const publisher = publisherOf(namespace);
    const before = (await stored()).length;
    const invalid = { ...health(), outcome: 'maybe' } as unknown as DeliveryHealth;
    await expect(publisher.publish(invalid)).rejects.toMatchObject({
      code: 'invalid_event_payload',
      retryable: false,
    });
    expect(await stored()).toHaveLength(before);
  });
});
