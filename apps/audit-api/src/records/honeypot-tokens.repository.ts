import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/**
 * The tokens of each chain whose latest computed rug pull verdict is a honeypot (status Fraud,
 * `is_honeypot` 1), with their creators (ADR 0302, amendment): the link of a creator to its
 * honeypots. Written by every computed verdict of a token, whatever the verdict cache keeps, so
 * the link does not depend on `AUDIT_VERDICT_TTL_MS`. EVM addresses in lower case.
 */
@Injectable()
export class HoneypotTokensRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * What a freshly computed verdict says of `token`: a honeypot of `creator` (kept or replaced),
   * or not one, or one without a known creator (a factory's): dropped, so a token cleared by a
   * later check stops flagging its creator. The latest verdict counts, however old.
   */
  async record(
    chain: string,
    token: string,
    finding: { readonly honeypot: boolean; readonly creator: string | null },
    version: string,
    now: Date,
  ): Promise<void> {
    if (!finding.honeypot || !finding.creator) {
      await this.dataSource.query(
        'DELETE FROM audit.honeypot_tokens WHERE chain = $1 AND token = $2',
        [chain, token],
      );
      return;
    }
    await this.dataSource.query(
      `INSERT INTO audit.honeypot_tokens (chain, token, creator, version, found_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (chain, token) DO UPDATE
         SET creator = EXCLUDED.creator, version = EXCLUDED.version, found_at = EXCLUDED.found_at`,
      [chain, token, finding.creator.toLowerCase(), version, now],
    );
  }

  /** Whether the latest computed rug pull verdict of `token` is a honeypot (with a known creator). */
  async isHoneypot(chain: string, token: string): Promise<boolean> {
    const rows = (await this.dataSource.query(
      'SELECT 1 FROM audit.honeypot_tokens WHERE chain = $1 AND token = $2',
      [chain, token.toLowerCase()],
    )) as unknown[];
    return rows.length > 0;
  }

  /** Honeypots of the chain created by `creator`, but `except` (the token being checked). */
  async createdBy(chain: string, creator: string, except?: string): Promise<string[]> {
    const rows = (await this.dataSource.query(
      `SELECT token FROM audit.honeypot_tokens
        WHERE chain = $1 AND creator = $2 AND token <> $3
        ORDER BY token`,
      [chain, creator.toLowerCase(), except ?? ''],
    )) as Array<{ token: string }>;
    return rows.map((row) => row.token);
  }
}
