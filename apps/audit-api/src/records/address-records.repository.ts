import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface AddressRecord {
  readonly id: number;
  readonly chain: string;
  readonly address: string;
  readonly checkedTimes: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly lastChecked: Date;
}

export interface SanctionRecordInput {
  /** Stable key of the source row (pack + list), so a re-check updates instead of duplicating. */
  readonly sourceKey: string;
  readonly category: string | null;
  readonly name: string | null;
  readonly description: string | null;
  readonly url: string | null;
  readonly isSanctioned: boolean;
}

export interface SanctionRecord extends Omit<SanctionRecordInput, 'sourceKey'> {
  readonly id: number;
  readonly trustscoreId: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

interface RecordRow {
  id: number;
  chain: string;
  address: string;
  checked_times: number;
  created_at: Date;
  updated_at: Date;
  last_checked: Date;
}

@Injectable()
export class AddressRecordsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Counts one check: a single INSERT … ON CONFLICT DO UPDATE … RETURNING, so concurrent checks
   * of one address serialize on the row and none loses its increment.
   */
  async recordCheck(chain: string, address: string, now: Date): Promise<AddressRecord> {
    const rows = (await this.dataSource.query(
      `INSERT INTO audit.address_records (chain, address, checked_times, created_at, updated_at, last_checked)
       VALUES ($1, $2, 1, $3, $3, $3)
       ON CONFLICT (chain, address) DO UPDATE SET
         checked_times = audit.address_records.checked_times + 1, updated_at = $3, last_checked = $3
       RETURNING id, chain, address, checked_times, created_at, updated_at, last_checked`,
      [chain, address, now],
    )) as RecordRow[];
    const row = rows[0]!;
    return {
      id: row.id,
      chain: row.chain,
      address: row.address,
      checkedTimes: row.checked_times,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      lastChecked: row.last_checked,
    };
  }

  /** Upserts the sanction rows of a record and returns the current ones, oldest first. */
  async syncSanctions(
    trustscoreId: number,
    inputs: readonly SanctionRecordInput[],
    now: Date,
  ): Promise<SanctionRecord[]> {
    if (inputs.length > 0) {
      await this.dataSource.query(
        `INSERT INTO audit.sanction_records (trustscore_id, source_key, category, name, description, url, is_sanctioned, created_at, updated_at)
         SELECT $1, * , $8::timestamptz, $8::timestamptz FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[])
         ON CONFLICT (trustscore_id, source_key) DO UPDATE SET
           category = EXCLUDED.category, name = EXCLUDED.name, description = EXCLUDED.description, url = EXCLUDED.url,
           is_sanctioned = EXCLUDED.is_sanctioned,
           updated_at = CASE WHEN (audit.sanction_records.category, audit.sanction_records.name, audit.sanction_records.description,
                                    audit.sanction_records.url, audit.sanction_records.is_sanctioned)
                                 IS DISTINCT FROM (EXCLUDED.category, EXCLUDED.name, EXCLUDED.description, EXCLUDED.url, EXCLUDED.is_sanctioned)
                             THEN EXCLUDED.updated_at ELSE audit.sanction_records.updated_at END`,
        [
          trustscoreId,
          inputs.map((i) => i.sourceKey),
          inputs.map((i) => i.category),
          inputs.map((i) => i.name),
          inputs.map((i) => i.description),
          inputs.map((i) => i.url),
          inputs.map((i) => i.isSanctioned),
          now,
        ],
      );
    }
    const keys = inputs.map((i) => i.sourceKey);
    const rows = (await this.dataSource.query(
      `SELECT id, trustscore_id, category, name, description, url, is_sanctioned, created_at, updated_at
         FROM audit.sanction_records WHERE trustscore_id = $1 AND source_key = ANY($2::text[]) ORDER BY id`,
      [trustscoreId, keys],
    )) as Array<{
      id: number;
      trustscore_id: number;
      category: string | null;
      name: string | null;
      description: string | null;
      url: string | null;
      is_sanctioned: boolean;
      created_at: Date;
      updated_at: Date;
    }>;
    return rows.map((row) => ({
      id: row.id,
      trustscoreId: row.trustscore_id,
      category: row.category,
      name: row.name,
      description: row.description,
      url: row.url,
      isSanctioned: row.is_sanctioned,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }));
  }
}
