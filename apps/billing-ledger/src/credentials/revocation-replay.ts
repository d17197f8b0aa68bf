import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { CredentialRevokedSchema, KvBuckets, type CredentialRevoked } from '@meridian/contracts';
import { DbJobGate } from '@meridian/platform-db';
import { NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { LOGGER } from '@meridian/platform-observability';
import { Kvm } from '@nats-io/kv';
import type { Logger } from 'pino';
import { CredentialsRepository } from './credentials.repository';

/** How long a start waits for NATS before it serves and replays in the background. */
const START_WAIT_MS = 5_000;
const RETRY_MIN_MS = 5_000;
const RETRY_MAX_MS = 60_000;

/**
 * A revocation survives a Postgres restore (QA, disaster recovery): every revocation the
 * billing-revoked-credentials KV bucket holds (written by StatePublisher from the outbox, key
 * revokedCredentialKey, value CredentialRevoked) is applied again at start to the credential it
 * names when the database holds it active, so a key revoked because it leaked does not come back
 * with a backup taken before. One warn line names how many and which ids. The bucket keeps an
 * entry for its TTL (24 h); deploy/README.md "Restoring Postgres" keeps the bucket.
 *
 * Before serving when Postgres is connected and NATS answers within START_WAIT_MS; else in the
 * background: once Postgres connects (DbJobGate, whose one line says the outage), and every
 * RETRY_MIN_MS doubling to RETRY_MAX_MS while NATS fails.
 */
@Injectable()
export class RevocationReplay implements OnModuleInit, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private retryMs = RETRY_MIN_MS;

  constructor(
    private readonly client: NatsClient,
    private readonly namespace: NatsNamespace,
    private readonly credentials: CredentialsRepository,
    private readonly db: DbJobGate,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    let wait: NodeJS.Timeout | undefined;
    const connected = await Promise.race([
      this.client.connection().then(() => true),
      new Promise<false>((resolve) => {
        wait = setTimeout(() => resolve(false), START_WAIT_MS);
        wait.unref();
      }),
    ]);
    clearTimeout(wait);
    if (!connected) this.retryLater('NATS is not connected');
    else if (this.db.open) await this.attempt();
    else void this.attempt();
  }

  onApplicationShutdown(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  /** The revocations re-applied, by id; throws when the bucket or Postgres can't be read. */
  async replay(): Promise<{ apiKeys: string[]; accessTokens: string[] }> {
    const kv = await new Kvm(this.client.jetstream()).open(
      this.namespace.bucket(KvBuckets.revokedCredentials.name),
    );
    const revocations: CredentialRevoked[] = [];
    for await (const key of await kv.keys()) {
      const entry = await kv.get(key);
      if (!entry || entry.operation !== 'PUT') continue;
      const parsed = CredentialRevokedSchema.safeParse(entry.json());
      if (parsed.success) revocations.push(parsed.data);
      else this.logger.warn({ key }, 'revoked-credentials entry unreadable; skipped');
    }
    const revoked = await this.credentials.reapplyRevocations(revocations);
    const count = revoked.apiKeys.length + revoked.accessTokens.length;
    if (count > 0)
      this.logger.warn(
        { count, apiKeys: revoked.apiKeys, accessTokens: revoked.accessTokens },
        `re-applied ${count} revocation(s) the database did not hold (restored from before them?)`,
      );
    return revoked;
  }

  private async attempt(): Promise<void> {
    try {
      await this.db.runOnce(() => this.replay());
    } catch (error) {
      this.retryLater(error instanceof Error ? error.message : String(error));
    }
  }

  private retryLater(reason: string): void {
    if (this.closed) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    this.logger.warn(
      { err: reason, retryMs: delay },
      'replaying credential revocations failed; retrying',
    );
    this.timer = setTimeout(() => void this.attempt(), delay);
    this.timer.unref();
  }
}
