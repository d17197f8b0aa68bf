import { randomBytes } from 'node:crypto';
import { KvBuckets, WebhookStatusEntrySchema } from '@meridian/contracts';
import { NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { parseSecretsKey, SecretKeyRing } from '@meridian/platform-secrets';
import { createTestDatabase, movedClock, runAppScript, type TestDatabase } from '@meridian/testing';
import { MAX_PREVIOUS_SECRETS, ROTATION_OVERLAP_MS } from '@meridian/webhooks';
import { Kvm } from '@nats-io/kv';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { StatusPublisher } from '../src/status/status-publisher.service';
import { SecretReseal } from '../src/webhooks/secret-reseal';
import { rotatedWebhookResponse, webhookResponse } from '../src/webhooks/webhook-response.schemas';
import {
  address,
  eventually,
  startMatcherStack,
  type MatcherTestStack,
} from './support/matcher-app';
import {
  startDeliveryWorkerProcess,
  type RunningDeliveryWorker,
} from './support/delivery-worker.process';
import { Receiver } from './support/receiver';

jest.setTimeout(240_000);

const MINUTE = 60_000;

/**
 * QA: a second rotation ended the first previous secret early (the delivery carried the new and
 * the second secret only). webhook-matcher in process (FakeClock) and the real delivery-worker
 * (a child process whose clock moves with it through CLOCK_OFFSET_FILE, ADR 0505) sign test
 * deliveries that a receiver checks with standardwebhooks' `Webhook.verify`: every previous
 * secret signs until its own announced expiry, at most 3 at once (409 beyond), and
 * `expire_previous` ends them all (ADR 0423 amendment).
 */
describe('repeated secret rotation: every previous secret signs until its own expiry', () => {
  let s: MatcherTestStack;
  let workerDb: TestDatabase;
  let worker: RunningDeliveryWorker | undefined;
  const receiver = new Receiver();
  const workerClock = movedClock('wh-rotation-clock');

  /** Moves the matcher's FakeClock and the worker's clock by the same amount. */
  function advance(ms: number): void {
    workerClock.advance(ms);
    s.clock.advance(ms);
  }

  beforeAll(async () => {
    s = await startMatcherStack();
    await receiver.start();
    workerDb = await createTestDatabase({ prefix: 'wh_rot_overlap' });
    await runAppScript('apps/delivery-worker/src/migrate.ts', { DATABASE_URL: workerDb.url });
    worker = await startDeliveryWorkerProcess({
      databaseUrl: workerDb.url,
      natsPrefix: s.natsPrefix,
      env: {
        WEBHOOK_SECRETS_KEY: s.config.WEBHOOK_SECRETS_KEY,
        ...workerClock.env,
        // A job stamped by the matcher's moved clock before the worker read the new offset is
        // 'not_due' by up to a day on the worker's clock: it looks again within half a second
        // of real time, once the worker's clock has moved too.
        DELIVERY_RECHECK_MAX_MS: '500',
      },
    });
  });

  afterAll(async () => {
    await worker?.stop();
    await receiver.stop();
    await workerDb?.drop();
    await s?.close();
    workerClock.dispose();
  });

  /**
   * A test delivery received at `path`, sent once the worker's clock shows the matcher's (the
   * worker reads the offset file every 50 ms: a delivery signed before is asked for again).
   */
  async function testDelivery(key: string, id: string, path: string) {
    const notBefore = Math.floor(s.clock.now().getTime() / 1000);
    for (;;) {
      const before = receiver.at(path).length;
      expect((await s.call('POST', `/webhooks/${id}/test`, key)).status).toBe(202);
      await eventually(async () => receiver.at(path).length > before, 30_000);
      const got = receiver.at(path).at(-1)!;
      if (Number(got.headers['webhook-timestamp']) >= notBefore) return got;
    }
  }

  /** standardwebhooks' verify, as a receiver whose clock reads the delivery's timestamp. */
  function verifies(got: Awaited<ReturnType<typeof testDelivery>>, secret: string): boolean {
    const headers = got.headers as Record<string, string>;
    const now = jest
      .spyOn(Date, 'now')
      .mockReturnValue(Number(headers['webhook-timestamp']) * 1000);
    try {
      new Webhook(secret).verify(got.body, headers);
      return true;
    } catch {
      return false;
    } finally {
      now.mockRestore();
    }
  }

  const iso = (ms: number) => new Date(ms).toISOString();

  it('rotated twice, a delivery verifies with each of the three secrets; the first stops at its own expiry; the cap; expire_previous', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const created = await s.call('POST', '/webhooks', key, {
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: `${receiver.url}/hook`,
      addresses: [address(9)],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const rotate = (body: object = {}) =>
      s.call('POST', `/webhooks/${id}/secret/rotate`, key, body);
    const secrets: string[] = [created.body.secret];

    // First rotation at t0: the first secret signs until t0 + 24 h.
    const t0 = s.clock.now().getTime();
    const first = await rotate();
    expect(first.status).toBe(200);
    expect(rotatedWebhookResponse.safeParse(first.body).error).toBeUndefined();
    expect(first.body.previous_secret_expires_at).toBe(iso(t0 + ROTATION_OVERLAP_MS));
    expect(first.body.previous_secrets_expire_at).toEqual([iso(t0 + ROTATION_OVERLAP_MS)]);
    secrets.push(first.body.secret);

    // Seven minutes later, again: both previous secrets keep their own expiry.
    advance(7 * MINUTE);
    const t1 = s.clock.now().getTime();
    const second = await rotate();
    expect(second.status).toBe(200);
    const announced = [iso(t1 + ROTATION_OVERLAP_MS), iso(t0 + ROTATION_OVERLAP_MS)];
    expect(second.body.previous_secret_expires_at).toBe(announced[0]);
    expect(second.body.previous_secrets_expire_at).toEqual(announced);
    secrets.push(second.body.secret);
    const read = await s.call('GET', `/webhooks/${id}`, key);
    expect(webhookResponse.safeParse(read.body).error).toBeUndefined();
    expect(read.body.previous_secrets_expire_at).toEqual(announced);

    let got = await testDelivery(key, id, '/hook');
    expect((got.headers['webhook-signature'] as string).split(' ')).toHaveLength(3);
    expect((got.headers['x-signature'] as string).match(/v1=/g)).toHaveLength(3);
    for (const secret of secrets) expect(verifies(got, secret)).toBe(true);

    // A third rotation fills the overlap (3 previous secrets); a fourth is refused, nothing
    // changes, and the answer says when the earliest ends.
    advance(MINUTE);
    const t2 = s.clock.now().getTime();
    const third = await rotate();
    expect(third.body.previous_secrets_expire_at).toHaveLength(MAX_PREVIOUS_SECRETS);
    secrets.push(third.body.secret);
    advance(MINUTE);
    const refused = await rotate();
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      error: 'too_many_previous_secrets',
      next_rotation_at: iso(t0 + ROTATION_OVERLAP_MS),
      previous_secrets_expire_at: [iso(t2 + ROTATION_OVERLAP_MS), ...announced],
    });
    const unchanged = await s.call('GET', `/webhooks/${id}`, key);
    expect(unchanged.body.version).toBe(third.body.version);

    // Past the first previous secret's expiry: it no longer signs, the others do; there is
    // room for one more rotation again.
    advance(t0 + ROTATION_OVERLAP_MS + 1_000 - s.clock.now().getTime());
    got = await testDelivery(key, id, '/hook');
    expect(verifies(got, secrets[0]!)).toBe(false);
    for (const secret of secrets.slice(1)) expect(verifies(got, secret)).toBe(true);
    expect((got.headers['webhook-signature'] as string).split(' ')).toHaveLength(3);
    expect((await s.call('GET', `/webhooks/${id}`, key)).body.previous_secrets_expire_at).toEqual([
      iso(t2 + ROTATION_OVERLAP_MS),
      iso(t1 + ROTATION_OVERLAP_MS),
    ]);
    const fourth = await rotate();
    expect(fourth.status).toBe(200);
    expect(fourth.body.previous_secrets_expire_at).toHaveLength(MAX_PREVIOUS_SECRETS);
    secrets.push(fourth.body.secret);

    // expire_previous ends every previous secret at once, also at the cap.
    const leaked = await rotate({ expire_previous: true });
    expect(leaked.status).toBe(200);
    expect(rotatedWebhookResponse.safeParse(leaked.body).error).toBeUndefined();
    expect(leaked.body.previous_secret_expires_at).toBeNull();
    expect(leaked.body.previous_secrets_expire_at).toEqual([]);
    got = await testDelivery(key, id, '/hook');
    expect(verifies(got, leaked.body.secret)).toBe(true);
    for (const secret of secrets) expect(verifies(got, secret)).toBe(false);
    expect((got.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
  });

  it('the reseal (ADR 0424) seals every in-overlap previous secret under the new key and drops the expired ones', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const created = await s.call('POST', '/webhooks', key, {
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: `${receiver.url}/resealed`,
      addresses: [address(10)],
    });
    const id = created.body.id as string;
    const rotate = () => s.call('POST', `/webhooks/${id}/secret/rotate`, key, {});
    expect((await rotate()).status).toBe(200);
    advance(ROTATION_OVERLAP_MS - MINUTE);
    expect((await rotate()).status).toBe(200);
    expect((await rotate()).status).toBe(200);
    advance(2 * MINUTE); // the first previous secret has expired, two are live
    const newKey = randomBytes(32);
    const ring = new SecretKeyRing(newKey, [parseSecretsKey(s.config.WEBHOOK_SECRETS_KEY)]);
    const report = await new SecretReseal({
      dataSource: s.dataSource,
      ring,
      clock: s.clock,
      logger: pino({ level: 'silent' }),
      publisher: s.app.get(StatusPublisher),
      client: s.app.get(NatsClient),
      namespace: s.app.get(NatsNamespace),
    }).run();
    expect(report).toMatchObject({ failed: [], staleRows: 0, staleEntries: 0 });
    expect(report.expiredDropped).toBeGreaterThanOrEqual(1);
    const [row] = await s.dataSource.query(
      `SELECT secret_sealed, previous_secret_sealed, previous_secrets FROM webhooks.webhooks
        WHERE id = $1`,
      [id],
    );
    const sealed: string[] = [
      row.secret_sealed,
      row.previous_secret_sealed,
      ...row.previous_secrets.map((p: { sealed: string }) => p.sealed),
    ];
    expect(row.previous_secrets).toHaveLength(2);
    for (const value of sealed) expect(value.startsWith(ring.currentPrefix)).toBe(true);
    const kv = await new Kvm(s.app.get(NatsClient).jetstream()).open(
      s.app.get(NatsNamespace).bucket(KvBuckets.webhookStatus.name),
    );
    await eventually(async () => {
      const entry = WebhookStatusEntrySchema.parse((await kv.get(id))!.json());
      const all = [...entry.secrets, ...(entry.earlierSecrets ?? [])];
      return all.length === 3 && all.every((v) => v.sealed.startsWith(ring.currentPrefix));
    });
  });
});
