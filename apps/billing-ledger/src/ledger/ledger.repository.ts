import { Inject, Injectable } from '@nestjs/common';
import type { ContractOverrides, PlanId } from '@meridian/plans';
import { Counter, Gauge, Registry } from 'prom-client';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { numberArray, textArray } from '../db/array-literal';
import { PublishedMarks } from '../state/published-marks';
import { BalanceCache } from './balance-cache';
import { assertBalanced, type LeftPaidPeriod, type Posting } from './ledger-math';

export type JournalKind =
  'usage' | 'allowance_reset' | 'plan_change' | 'topup_created' | 'topup_cleared';

/** One account's balance row joined with what the ledger needs of the account. */
export interface BalanceRow {
  accountId: string;
  allowance: number;
  purchased: number;
  pending: number;
  allowanceTotal: number;
  /**
   * What the prior period left for late usage (ADR 0108); null: no prior period. Stored with the
   * period start it is the prior of (`prior_of`): read as null when the period has moved on
   * without it.
   */
  prior: number | null;
  /**
   * Allowance CU spent in the account's allowance chain: the periods since its last natural
   * roll, linked by plan changes (ADR 0109). A plan change grants the new allowance less this.
   * Stored with the period start it counts for (`chain_of`); a row whose period moved on without
   * it (written before the column, or a roll by an older release) counts what its current
   * allowance spent: `allowance_total_cu - allowance_cu`.
   */
  chainSpent: number;
  periodStart: Date | null;
  periodEnd: Date | null;
  exhaustedSince: Date | null;
  version: number;
  planId: PlanId | null;
  contract: ContractOverrides | null;
  planStartedAt: Date;
  /**
   * Renewal anchor of a paid plan's monthly periods: kept between paid plans and across a return
   * from Free that resumes the paid period (ADR 0109 amendment). Stored with the plan start it
   * was set at (`accounts.renewal`); otherwise (a row from before it, a change by an older
   * release) the plan start.
   */
  renewalAnchor: Date;
  /** The paid period the account left for Free or no plan, resumable until its end. */
  leftPaid: LeftPaidPeriod | null;
  accountType: 'individual' | 'team';
  nodeOwner: boolean;
  name: string;
  createdAt: Date;
}

export interface JournalInput {
  key: string;
  accountId: string;
  kind: JournalKind;
  amount: number;
  overdraft?: number;
  occurredAt: Date;
  detail?: Record<string, unknown> | null;
  postings: Posting[];
}

/** What a transaction saved, applied to the cache and the published marks after its commit. */
interface Saved {
  rows: BalanceRow[];
  marks: Array<{ accountId: string; version: number }>;
}

interface RawBalance {
  account_id: string;
  allowance_cu: string;
  purchased_cu: string;
  pending_cu: string;
  allowance_total_cu: string;
  prior_allowance_cu: string | null;
  prior_of: Date | null;
  chain_spent_cu: string;
  chain_of: Date | null;
  period_start: Date | null;
  period_end: Date | null;
  exhausted_since: Date | null;
  version: string;
  plan_id: PlanId | null;
  contract: ContractOverrides | null;
  plan_started_at: Date;
  renewal: StoredRenewal | null;
  type: 'individual' | 'team';
  node_owner: boolean;
  name: string;
  created_at: Date;
}

const SELECT_BALANCE = `
  SELECT b.account_id, b.allowance_cu, b.purchased_cu, b.pending_cu, b.allowance_total_cu, b.prior_allowance_cu, b.prior_of, b.chain_spent_cu, b.chain_of, b.period_start, b.period_end,
         b.exhausted_since, b.version, a.plan_id, a.contract, a.plan_started_at, a.renewal, a.type, a.node_owner, a.name, a.created_at
    FROM billing.balances b JOIN billing.accounts a ON a.id = b.account_id`;

/** `accounts.renewal` (jsonb): the renewal anchor and a left paid period, for one plan start. */
interface StoredRenewal {
  /** The plan start these are for: stale once another release changed the plan. */
  of: string;
  anchor: string;
  left: { anchor: string; end: string; spent: number } | null;
}

function renewalOf(raw: RawBalance): Pick<BalanceRow, 'renewalAnchor' | 'leftPaid'> {
  const stored = raw.renewal;
  if (stored === null || Date.parse(stored.of) !== raw.plan_started_at.getTime())
    return { renewalAnchor: raw.plan_started_at, leftPaid: null };
  const left = stored.left;
  return {
    renewalAnchor: new Date(stored.anchor),
    leftPaid: left && {
      anchor: new Date(left.anchor),
      end: new Date(left.end),
      spent: left.spent,
    },
  };
}

function toRow(raw: RawBalance): BalanceRow {
  return {
    ...renewalOf(raw),
    accountId: raw.account_id,
    allowance: Number(raw.allowance_cu),
    purchased: Number(raw.purchased_cu),
    pending: Number(raw.pending_cu),
    allowanceTotal: Number(raw.allowance_total_cu),
    prior:
      raw.prior_allowance_cu !== null &&
      raw.prior_of !== null &&
      raw.prior_of.getTime() === raw.period_start?.getTime()
        ? Number(raw.prior_allowance_cu)
        : null,
    chainSpent:
      raw.chain_of?.getTime() === raw.period_start?.getTime()
        ? Number(raw.chain_spent_cu)
        : Math.max(Number(raw.allowance_total_cu) - Number(raw.allowance_cu), 0),
    periodStart: raw.period_start,
    periodEnd: raw.period_end,
    exhaustedSince: raw.exhausted_since,
    version: Number(raw.version),
    planId: raw.plan_id,
    contract: raw.contract,
    planStartedAt: raw.plan_started_at,
    accountType: raw.type,
    nodeOwner: raw.node_owner,
    name: raw.name,
    createdAt: raw.created_at,
  };
}

/** Where a journal kind is written: its journal table, entry table and unique key. */
interface JournalTables {
  journal: string;
  entries: string;
  conflict: string;
  partitioned: boolean;
}

const LEDGER_TABLES: JournalTables = {
  journal: 'billing.ledger_journal',
  entries: 'billing.ledger_entries',
  conflict: 'idempotency_key',
  partitioned: false,
};

const USAGE_TABLES: JournalTables = {
  journal: 'billing.usage_journal',
  entries: 'billing.usage_entries',
  conflict: 'idempotency_key, occurred_at',
  partitioned: true,
};

/** SQL of the ledger tables (journal, entries, balances). Every write takes the caller's transaction. */
@Injectable()
export class LedgerRepository {
  /** Committed balance rows by version, so a lock need not read them again (ADR 0106). */
  readonly cache: BalanceCache;
  /** What each open transaction saved: rows for the cache, published marks it wrote. */
  private readonly saved = new WeakMap<EntityManager, Saved>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly marks: PublishedMarks,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'BALANCE_CACHE_ACCOUNTS'>,
    registry: Registry,
  ) {
    const cache = (this.cache = new BalanceCache(config.BALANCE_CACHE_ACCOUNTS));
    // Read at each scrape: a lock's rows taken from the cache or read again (ADR 0106).
    new Counter({
      name: 'billing_balance_cache_lookups_total',
      help: 'Balance rows a usage lock took from the balance cache (hit) or read from Postgres (miss)',
      labelNames: ['outcome'],
      registers: [registry],
      collect() {
        this.reset();
        this.inc({ outcome: 'hit' }, cache.hits);
        this.inc({ outcome: 'miss' }, cache.misses);
      },
    });
    new Gauge({
      name: 'billing_balance_cache_rows',
      help: 'Balance rows held by the balance cache (BALANCE_CACHE_ACCOUNTS at most)',
      registers: [registry],
      collect() {
        this.set(cache.size);
      },
    });
  }

  /**
   * A READ COMMITTED transaction. After its commit the balance rows it saved enter the cache and
   * the published marks it wrote are done (a transaction that fails changes neither).
   */
  async transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    let saved: Saved = { rows: [], marks: [] };
    const result = await this.dataSource.transaction('READ COMMITTED', (manager) => {
      saved = { rows: [], marks: [] };
      this.saved.set(manager, saved);
      return work(manager);
    });
    this.cache.remember(saved.rows);
    this.marks.marked(saved.marks);
    return result;
  }

  /**
   * A usage transaction: its set-based statements run without Postgres's JIT. Their row
   * estimates (unnest of 10,000s of elements, joined) cost them far above `jit_above_cost`, so
   * every execution compiled and optimised its expressions for a plan that runs once: 180 ms of
   * the journal statement's 490 ms at 10,000 accounts (EXPLAIN ANALYZE, ADR 0104).
   */
  usageTransaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.transaction(async (manager) => {
      await manager.query('SET LOCAL jit = off');
      return work(manager);
    });
  }

  /** An account's new plan, its start, its renewal anchor and the paid period it left. */
  async setPlan(
    manager: EntityManager,
    accountId: string,
    change: {
      plan: PlanId | null;
      contract: ContractOverrides | null;
      startedAt: Date;
      anchor: Date;
      left: LeftPaidPeriod | null;
    },
  ): Promise<void> {
    const { left } = change;
    const renewal: StoredRenewal = {
      of: change.startedAt.toISOString(),
      anchor: change.anchor.toISOString(),
      left: left && {
        anchor: left.anchor.toISOString(),
        end: left.end.toISOString(),
        spent: left.spent,
      },
    };
    await manager.query(
      `UPDATE billing.accounts
          SET plan_id = $2, contract = $3, plan_started_at = $4, renewal = $5, updated_at = $4
        WHERE id = $1`,
      [
        accountId,
        change.plan,
        change.contract ? JSON.stringify(change.contract) : null,
        change.startedAt.toISOString(),
        JSON.stringify(renewal),
      ],
    );
  }

  async find(
    accountId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<BalanceRow | undefined> {
    const rows: RawBalance[] = await manager.query(`${SELECT_BALANCE} WHERE b.account_id = $1`, [
      accountId,
    ]);
    return rows[0] ? toRow(rows[0]) : undefined;
  }

  async findMany(accountIds: readonly string[]): Promise<BalanceRow[]> {
    const rows: RawBalance[] = await this.dataSource.query(
      `${SELECT_BALANCE} WHERE b.account_id = ANY($1::text[])`,
      [accountIds],
    );
    return rows.map(toRow);
  }

  /**
   * Locks the balance rows in account-id order (no deadlocks between concurrent batches) and
   * answers them, in that order, for the caller to change and save. The lock answers each row's
   * version only: a row this process committed at that version comes from the cache, the others
   * are read (joined with their account) under the lock just taken (ADR 0106).
   */
  async lock(
    manager: EntityManager,
    accountIds: readonly string[],
  ): Promise<Map<string, BalanceRow>> {
    const sorted = [...new Set(accountIds)].sort();
    const locked: Array<{ account_id: string; version: string }> = await manager.query(
      'SELECT account_id, version FROM billing.balances WHERE account_id = ANY($1::text[]) ORDER BY account_id FOR UPDATE',
      [textArray(sorted)],
    );
    const rows = new Map<string, BalanceRow | undefined>();
    const missing: string[] = [];
    for (const { account_id: accountId, version } of locked) {
      const row = this.cache.take(accountId, Number(version));
      rows.set(accountId, row);
      if (row === undefined) missing.push(accountId);
    }
    if (missing.length > 0) {
      const read: RawBalance[] = await manager.query(
        `${SELECT_BALANCE} WHERE b.account_id = ANY($1::text[])`,
        [textArray(missing)],
      );
      for (const raw of read) rows.set(raw.account_id, toRow(raw));
      // A balance row always has its account (no account is deleted); never answer a hole.
      for (const accountId of missing)
        if (rows.get(accountId) === undefined) rows.delete(accountId);
    }
    return rows as Map<string, BalanceRow>;
  }

  async existingKeys(manager: EntityManager, keys: readonly string[]): Promise<Set<string>> {
    const rows: Array<{ idempotency_key: string }> = await manager.query(
      'SELECT idempotency_key FROM billing.journals WHERE idempotency_key = ANY($1::text[])',
      [keys],
    );
    return new Set(rows.map((row) => row.idempotency_key));
  }

  /**
   * Inserts balanced journals with their entries, one statement per table pair (the entries
   * join their journal inside Postgres, so no journal ids travel back to be sent again). Usage
   * journals go to `usage_journal` / `usage_entries`, partitioned by the day they occurred and
   * kept `USAGE_JOURNAL_RETENTION_DAYS` (ADR 0104 "Storage"); every other kind to
   * `ledger_journal` / `ledger_entries`, kept. Answers how many journals were written.
   *
   * `keys`: `'may_exist'` (the default) skips a journal whose key is present, with its entries,
   * so a repeated operation is a no-op even without the caller's pre-check (a usage journal's
   * key is unique with the moment it occurred, which a repeat of the same event repeats). `'new'`
   * is for keys that cannot exist yet (a usage batch's keys carry its fresh batch id): a plain
   * insert, with the journal ids drawn first so the entries need not join on the returned keys,
   * ~15 % less of the statement (the speculative insert of ON CONFLICT and that join); a key that
   * exists after all fails the statement (unique violation) and so the transaction.
   */
  async insertJournals(
    manager: EntityManager,
    journals: readonly JournalInput[],
    keys: 'may_exist' | 'new' = 'may_exist',
  ): Promise<number> {
    const usage: JournalInput[] = [];
    const other: JournalInput[] = [];
    for (const journal of journals) (journal.kind === 'usage' ? usage : other).push(journal);
    return (
      (await this.insertInto(manager, USAGE_TABLES, usage, keys)) +
      (await this.insertInto(manager, LEDGER_TABLES, other, keys))
    );
  }

  private async insertInto(
    manager: EntityManager,
    tables: JournalTables,
    journals: readonly JournalInput[],
    keys: 'may_exist' | 'new',
  ): Promise<number> {
    if (journals.length === 0) return 0;
    const postingOf: number[] = [];
    const ledgers: string[] = [];
    const amounts: number[] = [];
    for (const [i, journal] of journals.entries()) {
      assertBalanced(journal.postings);
      for (const posting of journal.postings) {
        postingOf.push(i + 1);
        ledgers.push(posting.ledger);
        amounts.push(posting.amount);
      }
    }
    const params = [
      textArray(journals.map((j) => j.key)),
      textArray(journals.map((j) => j.accountId)),
      textArray(journals.map((j) => j.kind)),
      numberArray(journals.map((j) => j.amount)),
      numberArray(journals.map((j) => j.overdraft ?? 0)),
      textArray(journals.map((j) => j.occurredAt.toISOString())),
      textArray(journals.map((j) => (j.detail ? JSON.stringify(j.detail) : null))),
      numberArray(postingOf),
      textArray(ledgers),
      numberArray(amounts),
    ];
    const { journal, entries, conflict } = tables;
    // Usage entries carry their journal's moment: it is their partition key.
    const dayColumn = tables.partitioned ? ', occurred_at' : '';
    const dayValue = tables.partitioned ? ', v.occurred_at' : '';
    const columns = `unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::timestamptz[], $7::jsonb[])
           WITH ORDINALITY AS u(idempotency_key, account_id, kind, amount_cu, overdraft_cu, occurred_at, detail, n)`;
    const postings = 'unnest($8::int[], $9::text[], $10::bigint[]) AS p(n, ledger, amount_cu)';
    if (keys === 'new') {
      await manager.query(
        `WITH v AS MATERIALIZED (
           SELECT nextval('billing.ledger_journal_id_seq') AS id, u.* FROM ${columns}),
         j AS (
           INSERT INTO ${journal} (id, idempotency_key, account_id, kind, amount_cu, overdraft_cu, occurred_at, detail)
           SELECT id, idempotency_key, account_id, kind, amount_cu, overdraft_cu, occurred_at, detail FROM v ORDER BY n)
         INSERT INTO ${entries} (journal_id, account_id, ledger, amount_cu${dayColumn})
         SELECT v.id, v.account_id, p.ledger, p.amount_cu${dayValue} FROM ${postings} JOIN v ON v.n = p.n`,
        params,
      );
      return journals.length;
    }
    const [row]: Array<{ written: number }> = await manager.query(
      `WITH v AS (SELECT * FROM ${columns}),
       j AS (
         INSERT INTO ${journal} (idempotency_key, account_id, kind, amount_cu, overdraft_cu, occurred_at, detail)
         SELECT idempotency_key, account_id, kind, amount_cu, overdraft_cu, occurred_at, detail FROM v ORDER BY n
         ON CONFLICT (${conflict}) DO NOTHING
         RETURNING id, idempotency_key),
       e AS (
         INSERT INTO ${entries} (journal_id, account_id, ledger, amount_cu${dayColumn})
         SELECT j.id, v.account_id, p.ledger, p.amount_cu${dayValue}
           FROM ${postings}
           JOIN v ON v.n = p.n
           JOIN j ON j.idempotency_key = v.idempotency_key
         RETURNING 1)
       SELECT (SELECT count(*) FROM j)::int AS written`,
      params,
    );
    return row!.written;
  }

  /**
   * Writes the new running sums and the account's new version. Every change of a row (or of the
   * account fields it carries) comes here with a version one higher than the one locked: the
   * balance-state publisher and the cache (ADR 0106) both take a version for the row's content.
   * The row's published marker takes the version this process last put into KV for it, if the
   * marker is behind that (`PublishedMarks`): the row is locked and written anyway.
   */
  async saveBalances(
    manager: EntityManager,
    rows: readonly BalanceRow[],
    now: Date,
  ): Promise<void> {
    if (rows.length === 0) return;
    const published = this.marks.forSave(rows.map((row) => row.accountId));
    const saved = this.saved.get(manager);
    if (saved !== undefined) {
      for (const [i, row] of rows.entries()) {
        saved.rows.push({ ...row });
        if (published[i]! > 0)
          saved.marks.push({ accountId: row.accountId, version: published[i]! });
      }
    }
    await manager.query(
      `UPDATE billing.balances b
          SET allowance_cu = v.allowance, purchased_cu = v.purchased, pending_cu = v.pending,
              allowance_total_cu = v.total, prior_allowance_cu = v.prior,
              prior_of = CASE WHEN v.prior IS NULL THEN NULL ELSE v.period_start END,
              chain_spent_cu = v.chain_spent, chain_of = v.period_start,
              period_start = v.period_start, period_end = v.period_end,
              exhausted_since = v.exhausted_since, version = v.version, updated_at = $10,
              published_version = GREATEST(b.published_version, v.published)
         FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::timestamptz[], $7::timestamptz[], $8::timestamptz[], $9::bigint[], $11::bigint[], $12::bigint[], $13::bigint[])
              AS v(account_id, allowance, purchased, pending, total, period_start, period_end, exhausted_since, version, published, prior, chain_spent)
        WHERE b.account_id = v.account_id`,
      [
        textArray(rows.map((r) => r.accountId)),
        numberArray(rows.map((r) => r.allowance)),
        numberArray(rows.map((r) => r.purchased)),
        numberArray(rows.map((r) => r.pending)),
        numberArray(rows.map((r) => r.allowanceTotal)),
        textArray(rows.map((r) => r.periodStart?.toISOString() ?? null)),
        textArray(rows.map((r) => r.periodEnd?.toISOString() ?? null)),
        textArray(rows.map((r) => r.exhaustedSince?.toISOString() ?? null)),
        numberArray(rows.map((r) => r.version)),
        now.toISOString(),
        numberArray(published),
        numberArray(rows.map((r) => r.prior)),
        numberArray(rows.map((r) => r.chainSpent)),
      ],
    );
  }

  async insertBalances(
    manager: EntityManager,
    accountIds: readonly string[],
    now: Date,
  ): Promise<void> {
    await manager.query(
      'INSERT INTO billing.balances (account_id, updated_at) SELECT id, $2 FROM unnest($1::text[]) AS id',
      [accountIds, now.toISOString()],
    );
  }

  async dueForReset(now: Date, limit: number): Promise<string[]> {
    const rows: Array<{ account_id: string }> = await this.dataSource.query(
      'SELECT account_id FROM billing.balances WHERE period_end <= $1 ORDER BY period_end LIMIT $2',
      [now.toISOString(), limit],
    );
    return rows.map((row) => row.account_id);
  }
}
