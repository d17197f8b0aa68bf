import { randomBytes } from 'node:crypto';
import { SecretKeyRing } from '@meridian/platform-secrets';
import { verifyXSignature } from '@meridian/webhooks';
import { Registry } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import { Receiver, WorkerHarness, stillFalse, until } from '../testing/worker-harness';

const secret = () => `whsec_${randomBytes(24).toString('base64')}`;

/**
 * ADR 0424 on the real worker (NATS, Postgres, an HTTP receiver): entries sealed under key A
 * keep delivering once the worker runs with key B and A as previous, and after the reseal
 * (entries under B) with A removed; an entry under a key the ring lacks is refused cleanly.
 */
describe('delivery-worker: rotating WEBHOOK_SECRETS_KEY', () => {
  const h = new WorkerHarness();
  const receiver = new Receiver();
  const keyA = h.secretsKey;
  const keyB = randomBytes(32);
  const underA = new SecretKeyRing(keyA);
  const underB = new SecretKeyRing(keyB);
  const secrets = { v1: secret(), v2: secret(), other: secret() };

  beforeAll(async () => {
    await h.setup();
    await receiver.start();
  });

  afterAll(async () => {
    await h.teardown();
    await receiver.stop();
  });

  /** Publishes one job of `webhookId` and checks the request it makes is signed with `secret`. */
  async function deliversSignedWith(webhookId: string, path: string, signing: string) {
    const before = receiver.at(path).length;
    const job = await h.publishJob(webhookId);
    const got = await until(() => receiver.at(path).length > before && receiver.at(path).at(-1));
    const headers = got.headers as Record<string, string>;
    expect(headers['webhook-id']).toBe(job.id);
    expect(() => new Webhook(signing).verify(got.body, headers)).not.toThrow();
    const nowS = Math.floor(h.clock.now().getTime() / 1000);
    expect(verifyXSignature(headers['x-signature']!, got.body, signing, nowS)).toBe(true);
  }

  it('key B current, A previous: secrets sealed under A (v1 and v2) still sign', async () => {
    // What the matcher stored before the switch: a v1 value (before the ring) and a v2 one.
    await h.putWebhook('wh_v1', `${receiver.url}/v1`, [secrets.v1]);
    await h.putWebhook('wh_v2', `${receiver.url}/v2`, [secrets.v2], 'active', 'acc_1', (s) =>
      underA.seal(s),
    );
    await h.start({
      env: {
        WEBHOOK_SECRETS_KEY: keyB.toString('base64'),
        WEBHOOK_SECRETS_PREVIOUS_KEYS: keyA.toString('base64'),
      },
    });
    await deliversSignedWith('wh_v1', '/v1', secrets.v1);
    await deliversSignedWith('wh_v2', '/v2', secrets.v2);
    await h.app!.close();
  });

  it('after the reseal (entries under B), with A removed: the same secrets sign', async () => {
    await h.putWebhook('wh_v1', `${receiver.url}/v1`, [secrets.v1], 'active', 'acc_1', (s) =>
      underB.seal(s),
    );
    await h.putWebhook('wh_v2', `${receiver.url}/v2`, [secrets.v2], 'active', 'acc_1', (s) =>
      underB.seal(s),
    );
    await h.start({ env: { WEBHOOK_SECRETS_KEY: keyB.toString('base64') } });
    await deliversSignedWith('wh_v1', '/v1', secrets.v1);
    await deliversSignedWith('wh_v2', '/v2', secrets.v2);
  });

  it('an entry under a key the ring does not hold: no request, no attempt, counted; the worker goes on', async () => {
    // Left under A (missed by the reseal) while the worker holds B alone.
    await h.putWebhook('wh_old', `${receiver.url}/old`, [secrets.other], 'active', 'acc_1', (s) =>
      underA.seal(s),
    );
    const job = await h.publishJob('wh_old');
    const registry = h.app!.get(Registry);
    const refused = async () =>
      (await registry.getSingleMetric('delivery_secret_open_failures_total')!.get()).values.find(
        (v) => v.labels['reason'] === 'unknown_key',
      )?.value ?? 0;
    await until(async () => (await refused()) >= 1);
    await stillFalse(() => receiver.at('/old').length > 0);
    expect(await h.attemptRows(job.id)).toEqual([]);
    // Nothing crashed: the next job of a readable webhook is delivered.
    await deliversSignedWith('wh_v2', '/v2', secrets.v2);
  });
});
