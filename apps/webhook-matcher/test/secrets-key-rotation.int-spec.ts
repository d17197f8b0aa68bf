import { randomBytes } from 'node:crypto';
import { KvBuckets, WebhookStatusEntrySchema } from '@meridian/contracts';
import { NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import {
  createTestDatabase,
  runAppScript,
  testNatsUrl,
  type TestDatabase,
} from '@meridian/testing';
import { sealSecret, SecretKeyRing } from '@meridian/platform-secrets';
import { verifyXSignature } from '@meridian/webhooks';
import { Kvm } from '@nats-io/kv';
import pino from 'pino';
import { StatusPublisher } from '../src/status/status-publisher.service';
import { SecretReseal, type ResealReport } from '../src/webhooks/secret-reseal';
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

/**
 * ADR 0424 end to end: webhook-matcher (in process, key A) stores webhooks, the real
 * delivery-worker (a child process) signs their test deliveries, through the rotation: the
 * worker on key B with A previous; the reseal (several passes at once); the worker on B alone;
 * the reseal command; a value under a key the ring does not hold.
 */
describe('rotating WEBHOOK_SECRETS_KEY: webhook-matcher + delivery-worker, real Postgres and NATS', () => {
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);
  const b64 = (key: Buffer) => key.toString('base64');
  let s: MatcherTestStack;
  let workerDb: TestDatabase;
  let worker: RunningDeliveryWorker | undefined;
  const receiver = new Receiver();
  const logger = pino({ level: 'silent' });

  beforeAll(async () => {
    // Three independent pieces, started side by side (the migration is a child process).
    const migrated = (async () => {
      workerDb = await createTestDatabase({ prefix: 'wh_rot_worker' });
      await runAppScript('apps/delivery-worker/src/migrate.ts', { DATABASE_URL: workerDb.url });
    })();
    const started = (async () => {
      s = await startMatcherStack({ WEBHOOK_SECRETS_KEY: b64(keyA) });
    })();
    // All settled before any failure is thrown, so that afterAll finds everything started.
    const settled = await Promise.allSettled([migrated, started, receiver.start()]);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  });

  afterAll(async () => {
    await worker?.stop();
    await receiver.stop();
    await workerDb?.drop();
    await s?.close();
  });

  const matcherEnv = (keys: Record<string, string | undefined>) => ({
    DATABASE_URL: s.db.url,
    NATS_URL: testNatsUrl(),
    NATS_PREFIX: s.natsPrefix,
    LOG_LEVEL: 'error',
    WEBHOOK_SECRETS_PREVIOUS_KEYS: undefined,
    ...keys,
  });

  async function startWorker(keys: Record<string, string | undefined>): Promise<void> {
    await worker?.stop();
    worker = await startDeliveryWorkerProcess({
      databaseUrl: workerDb.url,
      natsPrefix: s.natsPrefix,
      env: { WEBHOOK_SECRETS_PREVIOUS_KEYS: undefined, ...keys },
    });
  }

  async function create(key: string, path: string, headers: Record<string, string> = {}) {
    const created = await s.call(
      'POST',
      '/webhooks',
      key,
      {
        network: 'eth-mainnet',
        trigger_type: 'address_activity',
        target_url: `${receiver.url}${path}`,
        addresses: [address(7)],
      },
      headers,
    );
    expect(created.status).toBe(201);
    return { id: created.body.id as string, secret: created.body.secret as string };
  }

  /** A test delivery of `id` reaches `path`, signed with every secret of `signing`. */
  async function deliversSignedWith(key: string, id: string, path: string, signing: string[]) {
    const before = receiver.at(path).length;
    expect((await s.call('POST', `/webhooks/${id}/test`, key)).status).toBe(202);
    await eventually(async () => receiver.at(path).length > before, 30_000);
    const got = receiver.at(path).at(-1)!;
    const header = got.headers['x-signature'] as string;
    const nowS = Math.floor(Date.now() / 1000);
    for (const secret of signing)
      expect(verifyXSignature(header, got.body, secret, nowS)).toBe(true);
    expect(header.match(/v1=/g)).toHaveLength(signing.length);
  }

  function reseal(ring: SecretKeyRing, batchSize?: number): Promise<ResealReport> {
    return new SecretReseal({
      dataSource: s.dataSource,
      ring,
      clock: s.clock,
      logger,
      publisher: s.app.get(StatusPublisher),
      client: s.app.get(NatsClient),
      namespace: s.app.get(NatsNamespace),
      ...(batchSize ? { batchSize } : {}),
    }).run();
  }

  async function bucketEntries() {
    const kv = await new Kvm(s.app.get(NatsClient).jetstream()).open(
      s.app.get(NatsNamespace).bucket(KvBuckets.webhookStatus.name),
    );
    const entries = new Map<string, ReturnType<typeof WebhookStatusEntrySchema.parse>>();
    for await (const key of await kv.keys()) {
      const entry = await kv.get(key);
      if (entry?.operation === 'PUT')
        entries.set(key, WebhookStatusEntrySchema.parse(entry.json()));
    }
    return entries;
  }

  let key: string;
  const hooks: Record<string, { id: string; secret: string; previous?: string }> = {};
  const ringBA = new SecretKeyRing(keyB, [keyA]);
  const ringB = new SecretKeyRing(keyB);

  it('webhooks sealed under key A deliver once the worker runs on B with A previous', async () => {
    ({ key } = await s.billing.createAccount({ plan: 'starter' }));
    hooks['plain'] = await create(key, '/plain');
    const rotated = await create(key, '/rotated', { 'idempotency-key': 'k-rot' });
    const rotation = await s.call('POST', `/webhooks/${rotated.id}/secret/rotate`, key, {});
    hooks['rotated'] = { id: rotated.id, secret: rotation.body.secret, previous: rotated.secret };
    // A webhook stored before the key ring: its secret is a v1 value under A.
    hooks['legacy'] = await create(key, '/legacy');
    await s.dataSource.query(
      `UPDATE webhooks.webhooks SET secret_sealed = $2, published_version = version - 1 WHERE id = $1`,
      [hooks['legacy'].id, sealSecret(keyA, hooks['legacy'].secret)],
    );
    await eventually(async () => {
      const entry = (await bucketEntries()).get(hooks['legacy']!.id);
      return entry?.secrets[0]?.sealed.startsWith('v1.') ?? false;
    });
    const [row] = await s.dataSource.query(
      `SELECT secret_sealed FROM webhooks.webhooks WHERE id = $1`,
      [hooks['plain'].id],
    );
    expect(row.secret_sealed.startsWith(new SecretKeyRing(keyA).currentPrefix)).toBe(true);

    await startWorker({
      WEBHOOK_SECRETS_KEY: b64(keyB),
      WEBHOOK_SECRETS_PREVIOUS_KEYS: b64(keyA),
    });
    await deliversSignedWith(key, hooks['plain'].id, '/plain', [hooks['plain'].secret]);
    await deliversSignedWith(key, rotated.id, '/rotated', [
      hooks['rotated'].secret,
      hooks['rotated'].previous!,
    ]);
    await deliversSignedWith(key, hooks['legacy'].id, '/legacy', [hooks['legacy'].secret]);
  });

  it('the reseal (two runs at once, small batches) seals every value once under B, table and bucket', async () => {
    // Another account's webhooks (a Starter account holds 10 active ones at most).
    const other = await s.billing.createAccount({ plan: 'starter' });
    for (let i = 0; i < 10; i += 1) await create(other.key, `/more-${i}`);
    const rows: Array<{ n: string }> = await s.dataSource.query(
      `SELECT count(*) AS n FROM webhooks.webhooks`,
    );
    const total = Number(rows[0]!.n);
    const [one, two] = await Promise.all([reseal(ringBA, 3), reseal(ringBA, 3)]);
    // Each row resealed by exactly one run; the rotated webhook holds two values.
    expect(one!.rows + two!.rows).toBe(total);
    expect(one!.values + two!.values).toBe(total + 1);
    // Each run reports what was left when it finished: a row the other run held locked then
    // may still count as stale in one report. A run after both finds nothing left to do.
    for (const report of [one!, two!]) expect(report.failed).toEqual([]);
    const after = await reseal(ringBA, 3);
    expect(after).toMatchObject({ rows: 0, values: 0, failed: [], staleRows: 0, staleEntries: 0 });

    const sealed: Array<{ secret_sealed: string; previous_secret_sealed: string | null }> =
      await s.dataSource.query(
        `SELECT secret_sealed, previous_secret_sealed FROM webhooks.webhooks`,
      );
    for (const row of sealed) {
      expect(row.secret_sealed.startsWith(ringB.currentPrefix)).toBe(true);
      if (row.previous_secret_sealed !== null)
        expect(row.previous_secret_sealed.startsWith(ringB.currentPrefix)).toBe(true);
    }
    const entries = await bucketEntries();
    expect(entries.size).toBe(total);
    for (const [name, hook] of Object.entries(hooks)) {
      const entry = entries.get(hook.id)!;
      expect([name, entry.secrets.map((x) => ringB.open(x.sealed))]).toEqual([
        name,
        [hook.secret, ...(hook.previous ? [hook.previous] : [])],
      ]);
    }
    // Idempotent: a second run finds nothing to do.
    expect(await reseal(ringBA)).toMatchObject({ rows: 0, values: 0, staleRows: 0 });
  });

  it('A removed: the same secrets still sign; the reseal command finds nothing left', async () => {
    await startWorker({ WEBHOOK_SECRETS_KEY: b64(keyB) });
    await deliversSignedWith(key, hooks['plain']!.id, '/plain', [hooks['plain']!.secret]);
    await deliversSignedWith(key, hooks['rotated']!.id, '/rotated', [
      hooks['rotated']!.secret,
      hooks['rotated']!.previous!,
    ]);
    await deliversSignedWith(key, hooks['legacy']!.id, '/legacy', [hooks['legacy']!.secret]);
    await expect(
      runAppScript(
        'apps/webhook-matcher/src/reseal.ts',
        matcherEnv({ WEBHOOK_SECRETS_KEY: b64(keyB) }),
      ),
    ).resolves.toBeUndefined();
  });

  it('a value under a key the ring does not hold is refused cleanly: worker, reseal, matcher', async () => {
    // This matcher still seals under A, which the worker no longer holds.
    const stray = await create(key, '/stray', { 'idempotency-key': 'k-stray' });
    expect((await s.call('POST', `/webhooks/${stray.id}/test`, key)).status).toBe(202);
    const refusals = async () => {
      const text = await (await fetch(`${worker!.url}/metrics`)).text();
      const line = text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('delivery_secret_open_failures_total{') && l.includes('"unknown_key"'),
        );
      return line ? Number(line.split(' ').at(-1)) : 0;
    };
    await eventually(async () => (await refusals()) >= 1, 30_000);
    expect(receiver.at('/stray')).toEqual([]);
    expect(worker!.app.running()).toBe(true);
    expect(worker!.app.log()).toContain('signing secret cannot be opened');
    await deliversSignedWith(key, hooks['plain']!.id, '/plain', [hooks['plain']!.secret]);

    // The reseal with B alone cannot open it: reported, the rest untouched, no crash.
    const report = await reseal(ringB);
    expect(report.failed).toEqual([
      { webhookId: stray.id, reason: 'unknown_key', keyId: new SecretKeyRing(keyA).currentKeyId },
    ]);
    expect(report).toMatchObject({ rows: 0, staleRows: 1, staleEntries: 1 });
    await expect(
      runAppScript(
        'apps/webhook-matcher/src/reseal.ts',
        matcherEnv({ WEBHOOK_SECRETS_KEY: b64(keyB) }),
      ),
    ).rejects.toThrow(/"staleRows":1/);

    // The matcher (on A alone) replaying a create whose secret is now under B: a 503, not a 500.
    const replay = await s.call(
      'POST',
      '/webhooks',
      key,
      {
        network: 'eth-mainnet',
        trigger_type: 'address_activity',
        target_url: `${receiver.url}/rotated`,
        addresses: [address(7)],
      },
      { 'idempotency-key': 'k-rot' },
    );
    expect(replay.status).toBe(503);
    expect(replay.body.error).toBe('secret_unavailable');
  });
});
