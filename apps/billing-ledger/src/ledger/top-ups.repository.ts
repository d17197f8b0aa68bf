import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { returning } from '../db/returning';
import { newId } from '../credentials/secrets';

export interface TopUpRow {
  id: string;
  accountId: string;
  cu: number;
  source: 'account' | 'operator';
  status: 'pending' | 'cleared';
  createdAt: Date;
  clearsAt: Date;
  clearedAt: Date | null;
  /** The API key an account's top-up was made with; null for the operator's and older rows. */
  apiKeyId: string | null;
  /** Who bought it, as the operator's side names them (ADR 0604); null: no person named. */
  createdBy: string | null;
  seq: string;
}

interface RawTopUp {
  id: string;
  account_id: string;
  cu: string;
  source: 'account' | 'operator';
  status: 'pending' | 'cleared';
  created_at: Date;
  clears_at: Date;
  cleared_at: Date | null;
  api_key_id: string | null;
  created_by: string | null;
  seq: string;
}

const COLUMNS =
  'id, account_id, cu, source, status, created_at, clears_at, cleared_at, api_key_id, created_by, seq';

function toRow(raw: RawTopUp): TopUpRow {
  return {
    id: raw.id,
    accountId: raw.account_id,
    cu: Number(raw.cu),
    source: raw.source,
    status: raw.status,
    createdAt: raw.created_at,
    clearsAt: raw.clears_at,
    clearedAt: raw.cleared_at,
    apiKeyId: raw.api_key_id,
    createdBy: raw.created_by,
    seq: raw.seq,
  };
}

@Injectable()
export class TopUpsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(
    manager: EntityManager,
    input: {
      accountId: string;
      cu: number;
      source: 'account' | 'operator';
      requestKey: string | null;
      apiKeyId: string | null;
      createdBy: string | null;
      now: Date;
      clearsAt: Date;
    },
  ): Promise<TopUpRow> {
    const rows: RawTopUp[] = await manager.query(
      `INSERT INTO billing.top_ups
         (id, account_id, cu, source, request_key, status, created_at, clears_at, api_key_id, created_by)
       VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9) RETURNING ${COLUMNS}`,
      [
        newId('top'),
        input.accountId,
        input.cu,
        input.source,
        input.requestKey,
        input.now.toISOString(),
        input.clearsAt.toISOString(),
        input.apiKeyId,
        input.createdBy,
      ],
    );
    return toRow(rows[0]!);
  }

  async findByRequestKey(
    manager: EntityManager,
    accountId: string,
    requestKey: string,
  ): Promise<TopUpRow | undefined> {
    const rows: RawTopUp[] = await manager.query(
      `SELECT ${COLUMNS} FROM billing.top_ups WHERE account_id = $1 AND request_key = $2`,
      [accountId, requestKey],
    );
    return rows[0] ? toRow(rows[0]) : undefined;
  }

  async due(now: Date, limit: number): Promise<TopUpRow[]> {
    const rows: RawTopUp[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM billing.top_ups WHERE status = 'pending' AND clears_at <= $1 ORDER BY clears_at LIMIT $2`,
      [now.toISOString(), limit],
    );
    return rows.map(toRow);
  }

  /** True when this call moved it from pending to cleared. */
  async markCleared(manager: EntityManager, id: string, now: Date): Promise<boolean> {
    const rows = returning<unknown>(
      await manager.query(
        `UPDATE billing.top_ups SET status = 'cleared', cleared_at = $2 WHERE id = $1 AND status = 'pending' RETURNING id`,
        [id, now.toISOString()],
      ),
    );
    return rows.length > 0;
  }

  async list(accountId: string, limit: number, cursor?: string): Promise<TopUpRow[]> {
    const rows: RawTopUp[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM billing.top_ups WHERE account_id = $1 AND ($2::bigint IS NULL OR seq < $2::bigint) ORDER BY seq DESC LIMIT $3`,
      [accountId, cursor ?? null, limit],
    );
    return rows.map(toRow);
  }

  async pendingOf(accountId: string): Promise<TopUpRow[]> {
    const rows: RawTopUp[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM billing.top_ups WHERE account_id = $1 AND status = 'pending' ORDER BY seq`,
      [accountId],
    );
    return rows.map(toRow);
  }
}
