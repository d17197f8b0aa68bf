import { isSealedSecretError, resealPasses, type SecretKeyRing } from '@meridian/platform-secrets';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { SealedKeysRepository, type SealedKeyRow } from './sealed-keys.repository';

/** What one reseal run did (ADR 0603); the command prints it as one JSON line. */
export interface ApiKeyResealReport {
  /** The key every API key is sealed under afterwards. */
  currentKeyId: string;
  /** API keys this run sealed anew under the current key. */
  resealed: number;
  /** Values the ring cannot open (a key it does not hold, tampered): left as they are. */
  failed: Array<{ userId: string; reason: string; keyId: string | null }>;
  /** Sealed API keys per key id after the run (`none`: sealed before the key ring). */
  byKey: Record<string, number>;
  /** API keys still not under the current key after the run: 0 means the old keys may go. */
  left: number;
}

export interface ApiKeyResealDeps {
  dataSource: DataSource;
  ring: SecretKeyRing;
  logger: Logger;
  /** Rows per transaction (default 200). */
  batchSize?: number;
}

/**
 * Seals again, under the current key, every account's API key another key of the ring sealed.
 * Each batch is one transaction over rows it locks (`FOR UPDATE SKIP LOCKED`): a row is either
 * still as it was or holds its new value, never half-written, and the dashboard keeps serving
 * (its reads do not wait on these locks; a new sign-up's row is sealed under the current key by
 * a pod already on it). Safe to run again (values under the current key are not read) and from
 * several processes at once (each takes rows the others do not hold).
 */
export class ApiKeyReseal {
  private readonly repository: SealedKeysRepository;

  constructor(private readonly deps: ApiKeyResealDeps) {
    this.repository = new SealedKeysRepository(deps.dataSource);
  }

  async run(): Promise<ApiKeyResealReport> {
    const { ring, logger } = this.deps;
    const report: ApiKeyResealReport = {
      currentKeyId: ring.currentKeyId,
      resealed: 0,
      failed: [],
      byKey: {},
      left: 0,
    };
    await this.resealAll(report);
    const byKey = await this.repository.countByKey();
    report.byKey = Object.fromEntries(byKey);
    report.left = [...byKey].reduce((n, [id, c]) => (id === ring.currentKeyId ? n : n + c), 0);
    logger.info({ ...report, failed: report.failed.length }, "accounts' API keys resealed");
    return report;
  }

  /** Passes over the table until one reseals nothing more (rows skipped while locked come back). */
  private async resealAll(report: ApiKeyResealReport): Promise<void> {
    await resealPasses<SealedKeyRow>(this.deps, this.repository.staleRows, async (m, row) => {
      const sealed = this.resealed(row.id, row.sealed_api_key, report);
      if (sealed === null) return false;
      await this.repository.store(m, row.id, sealed);
      report.resealed += 1;
      return true;
    });
  }

  /** The value under the current key, or null (and a report line) if the ring cannot open it. */
  private resealed(userId: string, sealed: string, report: ApiKeyResealReport): string | null {
    try {
      return this.deps.ring.reseal(sealed);
    } catch (error) {
      if (!isSealedSecretError(error)) throw error;
      report.failed.push({ userId, reason: error.reason, keyId: error.keyId });
      this.deps.logger.error(
        { userId, reason: error.reason, keyId: error.keyId, err: error.message },
        "account's API key cannot be resealed: the ring cannot open it",
      );
      return null;
    }
  }
}
