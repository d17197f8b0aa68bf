import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { AccountFacts } from '../auth/credential-source';

interface AccountRow {
  account_id: string;
  plan_id: string | null;
  account_type: 'individual' | 'team';
  node_owner: boolean;
  caps: AccountFacts['caps'];
  balance_state: string;
  exhausted_since: Date | null;
  allowance_cu: string;
  purchased_cu: string;
  pending_top_up_cu: string;
  version: string;
}

const factsOfRow = (row: AccountRow): AccountFacts => ({
  accountId: row.account_id,
  planId: row.plan_id,
  accountType: row.account_type,
  nodeOwner: row.node_owner,
  caps: row.caps,
  exhausted: row.balance_state === 'exhausted',
  exhaustedSince: row.exhausted_since,
  allowanceCu: Number(row.allowance_cu),
  purchasedCu: Number(row.purchased_cu),
  pendingTopUpCu: Number(row.pending_top_up_cu),
  version: Number(row.version),
});

/**
 * The account row is this app's copy of billing's facts (newest version wins, from gRPC answers
 * and billing events alike) and the lock every write of the account takes first, so two
 * requests can never together pass a cap.
 */
@Injectable()
export class AccountsRepository {
  /** Stores `facts` unless a newer version is there, then locks the row; returns what is stored. */
  async lockWith(m: EntityManager, facts: AccountFacts): Promise<AccountFacts> {
    await m.query(
      `INSERT INTO webhooks.accounts AS a (account_id, plan_id, account_type, node_owner, caps, balance_state,
         exhausted_since, allowance_cu, purchased_cu, pending_top_up_cu, version, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $10, $11, $8, $9, now())
       ON CONFLICT (account_id) DO UPDATE SET plan_id = EXCLUDED.plan_id, account_type = EXCLUDED.account_type,
         node_owner = EXCLUDED.node_owner, caps = EXCLUDED.caps, balance_state = EXCLUDED.balance_state,
         exhausted_since = EXCLUDED.exhausted_since, allowance_cu = EXCLUDED.allowance_cu,
         purchased_cu = EXCLUDED.purchased_cu, pending_top_up_cu = EXCLUDED.pending_top_up_cu,
         version = EXCLUDED.version, updated_at = now()
       WHERE a.version < EXCLUDED.version`,
      [
        facts.accountId,
        facts.planId,
        facts.accountType,
        facts.nodeOwner,
        JSON.stringify(facts.caps),
        facts.exhausted ? 'exhausted' : 'ok',
        facts.exhaustedSince,
        facts.pendingTopUpCu,
        facts.version,
        facts.allowanceCu,
        facts.purchasedCu,
      ],
    );
    return (await this.lock(m, facts.accountId))!;
  }

  /** Locks the account's row (FOR UPDATE); null when this app has never seen the account. */
  async lock(m: EntityManager, accountId: string): Promise<AccountFacts | null> {
    const rows: AccountRow[] = await m.query(
      `SELECT * FROM webhooks.accounts WHERE account_id = $1 FOR UPDATE`,
      [accountId],
    );
    return rows[0] ? factsOfRow(rows[0]) : null;
  }

  async find(m: EntityManager, accountId: string): Promise<AccountFacts | null> {
    const rows: AccountRow[] = await m.query(
      `SELECT * FROM webhooks.accounts WHERE account_id = $1`,
      [accountId],
    );
    return rows[0] ? factsOfRow(rows[0]) : null;
  }
}
