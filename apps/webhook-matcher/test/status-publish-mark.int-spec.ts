import { randomBytes } from 'node:crypto';
import { KvBuckets, WebhookStatusEntrySchema } from '@meridian/contracts';
import { NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { sealSecret } from '@meridian/platform-secrets';
import { Kvm } from '@nats-io/kv';
import { StatusPublisher } from '../src/status/status-publisher.service';
import { SecretResealRepository } from '../src/webhooks/secret-reseal.repository';
import { WebhooksRepository } from '../src/webhooks/webhooks.repository';
import { address, startMatcherStack, TARGET, type MatcherTestStack } from './support/matcher-app';

jest.setTimeout(120_000);

/**
 * The status publisher marks what the bucket holds (`published_version`). A reseal (ADR 0424)
 * stores a new sealing without a new version and moves that mark back, so the entry is put
 * again. A publish that had read the row before the reseal, and marked after it, used to mark
 * the resealed row published by its version alone: the new sealing never reached the bucket,
 * and the reseal's own count said it had (CI: secrets-key-rotation waited in vain once).
 * Real Postgres and NATS; the publisher's tick is off, so the test orders every step.
 */
describe('webhook status publisher: a mark is for the row it put (real Postgres and NATS)', () => {
  let s: MatcherTestStack;
  beforeAll(async () => {
    s = await startMatcherStack({ STATUS_REPUBLISH_MS: '0' });
  });
  afterAll(() => s?.close());

  const entryOf = async (id: string) => {
    const kv = await new Kvm(s.app.get(NatsClient).jetstream()).open(
      s.app.get(NatsNamespace).bucket(KvBuckets.webhookStatus.name),
    );
    const entry = await kv.get(id);
    return entry?.operation === 'PUT' ? WebhookStatusEntrySchema.parse(entry.json()) : undefined;
  };
  const marks = async (id: string) =>
    (
      (await s.dataSource.query(
        'SELECT version, published_version FROM webhooks.webhooks WHERE id = $1',
        [id],
      )) as Array<{ version: number; published_version: number }>
    )[0]!;

  it('a publish that read the row before a reseal does not mark the resealed row published; the next pass puts the new sealing', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const created = await s.call('POST', '/webhooks', key, {
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: TARGET,
      addresses: [address(1)],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const webhooks = s.app.get(WebhooksRepository);
    const m = s.dataSource.manager;
    // A change committed whose put has not been marked yet (NATS away, a crash): a pass reads it.
    await m.query('UPDATE webhooks.webhooks SET published_version = version - 1 WHERE id = $1', [
      id,
    ]);
    const [read] = await webhooks.unpublished(m, 10);
    expect(read?.id).toBe(id);
    // The reseal stores the secret under a new key, then that pass marks what it read.
    const resealed = sealSecret(randomBytes(32), created.body.secret as string);
    await new SecretResealRepository().store(m, id, resealed, []);
    await webhooks.markPublished(m, read!);
    const after = await marks(id);
    expect(after.published_version).toBeLessThan(after.version);
    // The next pass puts the resealed entry and marks it.
    await s.app.get(StatusPublisher).republish();
    expect((await entryOf(id))?.secrets[0]?.sealed).toBe(resealed);
    const done = await marks(id);
    expect(done.published_version).toBe(done.version);
  });
});
