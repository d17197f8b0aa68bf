import { Injectable } from '@nestjs/common';
import type { PlanId } from '@meridian/plans';
import { DataSource } from 'typeorm';

/** One line of the operator's account list (no balance: that is one account's read). */
export interface AccountSummaryRow {
  id: string;
  name: string;
  type: 'individual' | 'team';
  planId: PlanId | null;
  nodeOwner: boolean;
  createdAt: Date;
}

interface RawSummary {
  id: string;
  name: string;
  type: 'individual' | 'team';
  plan_id: PlanId | null;
  node_owner: boolean;
  created_at: Date;
}

/** `%`, `_` and `\` taken literally in a LIKE pattern. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** SQL of the operator's reads of the accounts table. */
@Injectable()
export class AccountsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Newest first (created_at, then id: a bulk creation shares one created_at). `query` matches an
   * id prefix or any part of the name, case-insensitively; `after` is the last id of the previous
   * page (keyset, so a page never repeats or skips an account created meanwhile).
   */
  async search(query: string, limit: number, after: string | undefined) {
    const rows: RawSummary[] = await this.dataSource.query(
      `SELECT a.id, a.name, a.type, a.plan_id, a.node_owner, a.created_at
         FROM billing.accounts a
        WHERE ($1 = '' OR a.id LIKE $2 || '%' OR a.name ILIKE '%' || $2 || '%')
          AND ($3::text IS NULL OR (a.created_at, a.id) <
               (SELECT c.created_at, c.id FROM billing.accounts c WHERE c.id = $3))
        ORDER BY a.created_at DESC, a.id DESC
        LIMIT $4`,
      [query, likeLiteral(query), after ?? null, limit],
    );
    return rows.map((raw): AccountSummaryRow => ({
      id: raw.id,
      name: raw.name,
      type: raw.type,
      planId: raw.plan_id,
      nodeOwner: raw.node_owner,
      createdAt: raw.created_at,
    }));
  }
}
