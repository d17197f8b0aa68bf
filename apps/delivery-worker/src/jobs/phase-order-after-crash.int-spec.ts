import { randomBytes } from 'node:crypto';
import { NatsNamespace } from '@meridian/platform-messaging';
import { testNatsUrl } from '@meridian/testing';
import { SECOND } from '@meridian/time';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { HELD_RETURN_MS } from './delivery-engine';
import {
  Receiver,
  TEST_JOBS_CONSUMER,
  WorkerHarness,
  stillFalse,
  until,
} from '../testing/worker-harness';

jest.setTimeout(60_000);

const secret = () => `whsec_${randomBytes(24).toString('base64')}`;

/**
 * QA (a reorg on anvil, then kill -9 of the worker): the re-included event's `confirmed: true`
 * went 40 s before its `confirmed: false`. The dead worker had the unconfirmed job in its hands;
 * the restarted one got the confirmed job, found no attempt of the unconfirmed one and nothing
 * of it in its memory, and sent it; the unconfirmed job came back only after the ack wait.
 */
describe('delivery-worker: the phases of one event stay in order after a worker dies', () => {
  const h = new WorkerHarness();
  const receiver = new Receiver();

  beforeAll(async () => {
    await h.setup();
    await receiver.start();
  });

  afterAll(async () => {
    await h.teardown();
    await receiver.stop();
  });

  it('a restarted worker holds the confirmed phase until the unconfirmed one its dead predecessor took comes back, and sends it first', async () => {
    await h.putWebhook('wh_crash', `${receiver.url}/crash`, [secret()], 'active', 'acc_crash');
    const eventId = `ev_crash_${h.prefix}`;
    const unconfirmed = await h.publishJob('wh_crash', { accountId: 'acc_crash', eventId });

    // The predecessor: takes the unconfirmed job from the worker's durable and dies without
    // acking it (its connection gone). JetStream gives it back after the ack wait (5 s here).
    const dying = await connect({ servers: testNatsUrl(), name: `dying-worker-${h.prefix}` });
    const ns = new NatsNamespace(h.prefix);
    const durable = await (
      await jetstreamManager(dying)
    )
      .jetstream()
      .consumers.get(ns.stream(TEST_JOBS_CONSUMER.stream), ns.consumer(TEST_JOBS_CONSUMER.durable));
    const taken = await durable.next({ expires: 5_000 });
    expect(taken?.json<{ id: string }>().id).toBe(unconfirmed.id);
    const takenAt = Date.now();
    await dying.close();

    // The confirmed phase is matched later; the restarted worker gets it first.
    const confirmed = await h.publishJob('wh_crash', {
      accountId: 'acc_crash',
      eventId,
      phase: 'confirmed',
    });
    await h.start();

    const got = await until(
      () => receiver.at('/crash').length === 2 && receiver.at('/crash'),
      30_000,
    );
    expect(got.map((r) => r.headers['webhook-id'])).toEqual([unconfirmed.id, confirmed.id]);
    expect(got.map((r) => JSON.parse(r.body).confirmed)).toEqual([false, true]);
    // Nothing went before the taken job came back (the ack wait, real time).
    expect(got[0]!.at - takenAt).toBeGreaterThanOrEqual(TEST_JOBS_CONSUMER.ackWaitMs - 500);
    const rows = await until(async () => {
      const r = await h.attemptRows(confirmed.id);
      return r.length === 1 && r[0]!.outcome !== null && r;
    });
    expect(rows).toMatchObject([{ attempt: 1, outcome: 'success', billed: true }]);
  });

  it('once the start grace is over, a later phase whose earlier one has no attempt and is not here goes alone', async () => {
    await h.putWebhook('wh_alone', `${receiver.url}/alone`, [secret()], 'active', 'acc_crash');
    const confirmed = await h.publishJob('wh_alone', {
      accountId: 'acc_crash',
      eventId: `ev_alone_${h.prefix}`,
      phase: 'confirmed',
    });
    // Within the grace (the worker's clock has not moved): it waits.
    await stillFalse(() => receiver.at('/alone').length > 0, 500);
    // The ack wait and the longest put-back of a job without an attempt have passed.
    h.clock.advance(TEST_JOBS_CONSUMER.ackWaitMs + HELD_RETURN_MS + SECOND);
    const [got] = await until(() => receiver.at('/alone').length === 1 && receiver.at('/alone'));
    expect(got!.headers['webhook-id']).toBe(confirmed.id);
  });
});
