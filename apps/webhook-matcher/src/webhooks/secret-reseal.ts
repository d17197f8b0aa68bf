import { KvBuckets } from '@meridian/contracts';
import type { NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { isSealedSecretError, resealPasses, type SecretKeyRing } from '@meridian/platform-secrets';
import type { Clock } from '@meridian/time';
import { Kvm } from '@nats-io/kv';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { livePreviousSecrets, type PreviousSecret } from '@meridian/webhooks';
import { previousSecretsOf } from './previous-secrets';
import { SecretResealRepository, type SealedSecretsRow } from './secret-reseal.repository';

/** What one reseal run did (ADR 0424); `npm`-less: the command prints it as one JSON line. */
export interface ResealReport {
  /** The key every value is sealed under afterwards. */
  currentKeyId: string;
  /** Webhook rows whose secrets this run sealed anew under the current key. */
  rows: number;
  /** Sealed values written (a row in its rotation overlap has one per live previous secret more). */
  values: number;
  /** Previous secrets past their overlap, dropped instead of resealed (never used again). */
  expiredDropped: number;
  /** Values the ring cannot open (a key it does not hold, tampered): left as they are. */
  failed: Array<{ webhookId: string; reason: string; keyId: string | null }>;
  /** Rows still holding a value under another key after the run (the failed ones, or rows
   * changed meanwhile by a replica with the old configuration: run again). */
  staleRows: number;
  /** Entries of the webhook-status bucket put again with the resealed values. */
  entriesRepublished: number;
  /** Entries of the bucket still holding a value under another key after the run. */
  staleEntries: number;
}

/** What re-publishing needs: the matcher's StatusPublisher (its tick does the same). */
export interface Republisher {
  republish(): Promise<void>;
}

export interface ResealDeps {
  dataSource: DataSource;
  ring: SecretKeyRing;
  clock: Clock;
  logger: Logger;
  publisher: Republisher;
  client: NatsClient;
  namespace: NatsNamespace;
  batchSize?: number;
}

/** Rounds of "find entries still under an old key, publish them again" before giving up. */
const BUCKET_ROUNDS = 3;

/**
 * Seals again, under the current key, every signing secret of the matcher's table that another
 * key of the ring sealed, then makes the webhook-status bucket hold the resealed entries. Safe
 * to run again (values already under the current key are left as they are) and from several
 * processes at once (each batch locks its rows, skipping rows another holds). Needs every
 * delivery-worker to hold the current key already: README "Rotating WEBHOOK_SECRETS_KEY".
 */
export class SecretReseal {
  private readonly repository = new SecretResealRepository();

  constructor(private readonly deps: ResealDeps) {}

  async run(): Promise<ResealReport> {
    const { ring, logger } = this.deps;
    const report: ResealReport = {
      currentKeyId: ring.currentKeyId,
      rows: 0,
      values: 0,
      expiredDropped: 0,
      failed: [],
      staleRows: 0,
      entriesRepublished: 0,
      staleEntries: 0,
    };
    const resealed = await this.resealTable(report);
    report.staleRows = await this.repository.countStale(
      this.deps.dataSource.manager,
      ring.currentPrefix,
    );
    await this.deps.publisher.republish();
    report.entriesRepublished =
      resealed.length -
      (await this.repository.countUnpublished(this.deps.dataSource.manager, resealed));
    report.staleEntries = await this.settleBucket(report);
    logger.info({ ...report, failed: report.failed.length }, 'webhook secrets resealed');
    return report;
  }

  /** Passes over the table until one reseals nothing more (rows skipped while locked come back). */
  private async resealTable(report: ResealReport): Promise<string[]> {
    const ids: string[] = [];
    await resealPasses<SealedSecretsRow>(this.deps, this.repository.staleRows, async (m, row) => {
      const next = this.resealed(row, report);
      if (next === null) return false;
      await this.repository.store(m, row.id, next.secret, next.previous);
      ids.push(row.id);
      return true;
    });
    return ids;
  }

  /** The row's values under the current key, or null (and a report line) if one cannot open. */
  private resealed(
    row: SealedSecretsRow,
    report: ResealReport,
  ): { secret: string; previous: PreviousSecret[] } | null {
    const { ring, clock } = this.deps;
    try {
      const secret = ring.reseal(row.secret_sealed);
      let values = secret === row.secret_sealed ? 0 : 1;
      const all = previousSecretsOf(row);
      const live = livePreviousSecrets(all, clock.now());
      const previous = live.map((s) => {
        const sealed = ring.reseal(s.sealed);
        if (sealed !== s.sealed) values += 1;
        return { sealed, expiresAt: s.expiresAt };
      });
      report.expiredDropped += all.length - live.length;
      report.rows += 1;
      report.values += values;
      return { secret, previous };
    } catch (error) {
      if (!isSealedSecretError(error)) throw error;
      report.failed.push({ webhookId: row.id, reason: error.reason, keyId: error.keyId });
      this.deps.logger.error(
        { webhookId: row.id, reason: error.reason, keyId: error.keyId, err: error.message },
        'signing secret cannot be resealed: the ring cannot open it',
      );
      return null;
    }
  }

  /**
   * Entries of the bucket still under another key whose row is resealed (a publish that read
   * the row before this run changed it, then marked it published) are published again.
   * Returns how many stale entries remain.
   */
  private async settleBucket(report: ResealReport): Promise<number> {
    let stale = await this.staleEntryIds();
    for (let round = 0; round < BUCKET_ROUNDS && stale.length > 0; round += 1) {
      const marked = await this.repository.markUnpublishedIfFresh(
        this.deps.dataSource.manager,
        this.deps.ring.currentPrefix,
        stale,
      );
      if (marked === 0) break;
      await this.deps.publisher.republish();
      report.entriesRepublished += marked;
      stale = await this.staleEntryIds();
    }
    return stale.length;
  }

  /** Keys of the webhook-status bucket whose entry holds a secret not under the current key. */
  private async staleEntryIds(): Promise<string[]> {
    await this.deps.client.connection();
    const kv = await new Kvm(this.deps.client.jetstream()).open(
      this.deps.namespace.bucket(KvBuckets.webhookStatus.name),
    );
    const stale: string[] = [];
    for await (const key of await kv.keys()) {
      const entry = await kv.get(key);
      if (!entry || entry.operation !== 'PUT') continue;
      let secrets: Array<{ sealed?: unknown }> = [];
      try {
        const value = entry.json<{ secrets?: Array<{ sealed?: unknown }> }>();
        if (Array.isArray(value.secrets)) secrets = value.secrets;
      } catch {
        continue; // not an entry this pass can read; the workers skip it too
      }
      if (secrets.some((s) => typeof s.sealed === 'string' && this.deps.ring.needsReseal(s.sealed)))
        stale.push(key);
    }
    return stale;
  }
}
