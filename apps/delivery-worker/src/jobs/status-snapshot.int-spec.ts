import { randomBytes } from 'node:crypto';
import { KvBuckets, type DeliveryHealth } from '@meridian/contracts';
import { provisionMessaging } from '@meridian/platform-messaging';
import { MINUTE } from '@meridian/time';
import { jetstreamManager } from '@nats-io/jetstream';
import { Receiver, WorkerHarness, stillFalse, until } from '../testing/worker-harness';

/**
 * No job is decided before the webhook statuses are in memory (ADR 0212 amendment). A worker
 * started while NATS was away meets the backlog when NATS returns; a job older than the
 * unknown-webhook wait (10 minutes) whose webhook is not in the mirror yet was dropped as
 * `webhook_unknown`. Here the snapshot is held back by the bucket being absent (the mirror
 * retries every 2 s) while the job is already on the stream.
 */
describe('delivery-worker: jobs wait for the status snapshot', () => {
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

  it('delivers a backlog job older than the unknown-webhook wait once the statuses load', async () => {
    const jsm = await jetstreamManager(h.nc);
    await jsm.streams.delete(`KV_${h.prefix}_${KvBuckets.webhookStatus.name}`);
    await h.start();
    const job = await h.publishJob('wh_backlog');
    h.clock.advance(20 * MINUTE);

    const dropped = async () =>
      (await h.health()).filter((e: DeliveryHealth) => e.outcome === 'dropped');
    await stillFalse(() => receiver.at('/backlog').length > 0, 500);
    expect(await dropped()).toEqual([]);

    await provisionMessaging(jsm, h.prefix, { buckets: [KvBuckets.webhookStatus] });
    await h.putWebhook('wh_backlog', `${receiver.url}/backlog`, [
      `whsec_${randomBytes(24).toString('base64')}`,
    ]);
    const [got] = await until(
      () => receiver.at('/backlog').length === 1 && receiver.at('/backlog'),
      30_000,
    );
    expect(got!.headers['webhook-id']).toBe(job.id);
    expect(await dropped()).toEqual([]);
  });
});
