import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export type AuditProduct = 'wallet-check' | 'wallet-audit' | 'rug-pull';

/**
 * Recent verdicts per (chain, address, product), reused while younger than the configured TTL
 * and computed on the same `version` of what the verdict depends on (the code hash for tokens).
 */
@Injectable()
export class VerdictCacheRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The verdict computed at or after `notBefore` on `version` (undefined: on any version). */
  async get<T>(
    chain: string,
    address: string,
    product: AuditProduct,
    version: string | undefined,
    notBefore: Date,
  ): Promise<{ verdict: T; computedAt: Date } | undefined> {
    const rows = (await this.dataSource.query(
      'SELECT verdict, computed_at FROM audit.verdicts WHERE chain = $1 AND address = $2 AND product = $3 AND ($4::text IS NULL OR version = $4) AND computed_at >= $5',
      [chain, address, product, version ?? null, notBefore],
    )) as Array<{ verdict: T; computed_at: Date }>;
    const row = rows[0];
    return row && { verdict: row.verdict, computedAt: new Date(row.computed_at) };
  }

  /** Drops the cached verdicts of an address for these products (they are computed again). */
  async forget(chain: string, address: string, products: readonly AuditProduct[]): Promise<void> {
    await this.dataSource.query(
      'DELETE FROM audit.verdicts WHERE chain = $1 AND address = $2 AND product = ANY($3::text[])',
      [chain, address, products],
    );
  }

  async put(
    chain: string,
    address: string,
    product: AuditProduct,
    version: string,
    verdict: unknown,
    now: Date,
  ): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO audit.verdicts (chain, address, product, version, verdict, computed_at) VALUES ($1, $2, $3, $4, $5::jsonb, $6)
       ON CONFLICT (chain, address, product) DO UPDATE
         SET version = EXCLUDED.version, verdict = EXCLUDED.verdict, computed_at = EXCLUDED.computed_at`,
      [chain, address, product, version, JSON.stringify(verdict), now],
    );
  }
}
