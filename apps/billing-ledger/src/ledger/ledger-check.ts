import type { DataSource } from 'typeorm';

export interface LedgerCheckReport {
  /**
   * Journals whose entries do not sum to zero, and retired days whose summary of an account
   * does not (`summary:<account>:<day>`) (must be empty).
   */
  unbalancedJournals: Array<{ journalId: string; sum: number }>;
  /** Accounts whose running sums differ from the sum of their entries (must be empty). */
  balanceMismatches: Array<{ accountId: string; ledger: string; balance: number; entries: number }>;
  /**
   * Accounts whose prior-period remainder (ADR 0108) differs from its entries: what the roll
   * into the period it is kept for expired, less the late usage taken back from it (must be
   * empty).
   */
  priorMismatches: Array<{ accountId: string; balance: number; entries: number }>;
  /**
   * Entries whose journal does not exist, journals whose account does not exist (must be
   * empty: the references are proven here, not checked by foreign-key triggers, ADR 0104).
   */
  orphanEntries: Array<{ entryId: string; journalId: string }>;
  orphanJournals: Array<{ journalId: string; accountId: string }>;
  /** Sum of every entry of the ledger, retired days' summaries included (must be zero). */
  total: number;
  /** Journals kept (a retired day's journals are summarised, not counted). */
  journals: number;
}

/** The ledger holds: nothing unbalanced, mismatched or orphaned, and it sums to zero. */
export function ledgerHolds(report: LedgerCheckReport): boolean {
  return (
    report.unbalancedJournals.length === 0 &&
    report.balanceMismatches.length === 0 &&
    report.priorMismatches.length === 0 &&
    report.orphanEntries.length === 0 &&
    report.orphanJournals.length === 0 &&
    report.total === 0
  );
}

/**
 * Proves the ledger (`billing.journals` and `billing.entries`: every kind, usage included, and
 * the summaries of retired usage days, ADR 0104 "Storage"): every journal balances, the whole
 * ledger sums to zero, each account's allowance / purchased / pending balance equals the sum of
 * its entries, so does what its prior
 * period left (the `allowance_expired` entries of the journals tagged with the period start it
 * is kept for: the roll's expiry and the late usage's take-backs), every entry has its journal
 * and every journal its account.
 */
export async function checkLedger(
  dataSource: DataSource,
  accountIds?: readonly string[],
): Promise<LedgerCheckReport> {
  const filter = accountIds ? 'WHERE account_id = ANY($1::text[])' : '';
  const params = accountIds ? [accountIds] : [];
  const accountFilter = accountIds ? 'AND account_id = ANY($1::text[])' : '';
  // A retired day's summary rows of one account stand for journals that each balanced: they
  // must sum to zero per account and day, and are reported like an unbalanced journal if not.
  const unbalanced: Array<{ journal_id: string; sum: string }> = await dataSource.query(
    `(SELECT journal_id::text, sum(amount_cu) AS sum FROM billing.entries ${filter} GROUP BY journal_id HAVING sum(amount_cu) <> 0 LIMIT 100)
     UNION ALL
     (SELECT 'summary:' || account_id || ':' || day, sum(amount_cu) FROM billing.usage_summaries ${filter} GROUP BY account_id, day HAVING sum(amount_cu) <> 0 LIMIT 100)`,
    params,
  );
  const mismatches: Array<{
    account_id: string;
    ledger: string;
    balance: string;
    entries: string;
  }> = await dataSource.query(
    `WITH sums AS (
       SELECT account_id,
              coalesce(sum(amount_cu) FILTER (WHERE ledger = 'allowance'), 0) AS allowance,
              coalesce(sum(amount_cu) FILTER (WHERE ledger = 'purchased'), 0) AS purchased,
              coalesce(sum(amount_cu) FILTER (WHERE ledger = 'pending'), 0) AS pending
         FROM (SELECT account_id, ledger, amount_cu FROM billing.entries ${filter}
               UNION ALL
               SELECT account_id, ledger, amount_cu FROM billing.usage_summaries ${filter}) x
        GROUP BY account_id)
     SELECT b.account_id, l.ledger, l.balance, l.entries
       FROM billing.balances b LEFT JOIN sums s ON s.account_id = b.account_id,
            LATERAL (VALUES ('allowance', b.allowance_cu, coalesce(s.allowance, 0)),
                            ('purchased', b.purchased_cu, coalesce(s.purchased, 0)),
                            ('pending', b.pending_cu, coalesce(s.pending, 0))) AS l(ledger, balance, entries)
      WHERE l.balance <> l.entries ${accountIds ? 'AND b.account_id = ANY($1::text[])' : ''}
      LIMIT 100`,
    params,
  );
  const priorMismatches: Array<{ account_id: string; balance: string; entries: string }> =
    await dataSource.query(
      `WITH tagged AS (
         SELECT j.account_id, e.amount_cu,
                coalesce(j.detail->>'periodStart', j.detail->>'priorOf')::timestamptz AS period
           FROM billing.entries e JOIN billing.journals j ON j.id = e.journal_id
          WHERE e.ledger = 'allowance_expired' ${accountIds ? 'AND e.account_id = ANY($1::text[])' : ''}
         UNION ALL
         SELECT account_id, amount_cu, prior_of FROM billing.usage_summaries
          WHERE ledger = 'allowance_expired' ${accountFilter})
       SELECT b.account_id, b.prior_allowance_cu AS balance, coalesce(sum(t.amount_cu), 0) AS entries
         FROM billing.balances b
         LEFT JOIN tagged t ON t.account_id = b.account_id AND t.period = b.prior_of
        WHERE b.prior_allowance_cu IS NOT NULL ${accountIds ? 'AND b.account_id = ANY($1::text[])' : ''}
        GROUP BY b.account_id, b.prior_allowance_cu
       HAVING b.prior_allowance_cu <> coalesce(sum(t.amount_cu), 0)
        LIMIT 100`,
      params,
    );
  const orphanEntries: Array<{ id: string; journal_id: string }> = await dataSource.query(
    `SELECT e.id, e.journal_id FROM billing.entries e
      WHERE NOT EXISTS (SELECT 1 FROM billing.journals j WHERE j.id = e.journal_id)
            ${accountIds ? 'AND e.account_id = ANY($1::text[])' : ''}
      LIMIT 100`,
    params,
  );
  const orphanJournals: Array<{ id: string; account_id: string }> = await dataSource.query(
    `SELECT j.id, j.account_id FROM billing.journals j
      WHERE NOT EXISTS (SELECT 1 FROM billing.accounts a WHERE a.id = j.account_id)
            ${accountIds ? 'AND j.account_id = ANY($1::text[])' : ''}
      LIMIT 100`,
    params,
  );
  const totals: Array<{ total: string | null; journals: string }> = await dataSource.query(
    `SELECT (SELECT coalesce(sum(amount_cu), 0) FROM billing.entries ${filter})
              + (SELECT coalesce(sum(amount_cu), 0) FROM billing.usage_summaries ${filter}) AS total,
            (SELECT count(*) FROM billing.journals ${filter}) AS journals`,
    params,
  );
  return {
    unbalancedJournals: unbalanced.map((r) => ({ journalId: r.journal_id, sum: Number(r.sum) })),
    balanceMismatches: mismatches.map((r) => ({
      accountId: r.account_id,
      ledger: r.ledger,
      balance: Number(r.balance),
      entries: Number(r.entries),
    })),
    priorMismatches: priorMismatches.map((r) => ({
      accountId: r.account_id,
      balance: Number(r.balance),
      entries: Number(r.entries),
    })),
    orphanEntries: orphanEntries.map((r) => ({ entryId: r.id, journalId: r.journal_id })),
    orphanJournals: orphanJournals.map((r) => ({ journalId: r.id, accountId: r.account_id })),
    total: Number(totals[0]?.total ?? 0),
    journals: Number(totals[0]?.journals ?? 0),
  };
}
