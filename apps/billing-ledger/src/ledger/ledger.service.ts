import { Inject, Injectable } from '@nestjs/common';
import {
  Consumers,
  Events,
  planChangedId,
  topUpClearedId,
  usageHourOf,
  type DeadLetter,
  type UsageRecorded,
} from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import {
  currentAllowanceWindow,
  PLANS,
  type ContractOverrides,
  type PlanOrNone,
} from '@meridian/plans';
import type { Clock } from '@meridian/time';
import type { EntityManager } from 'typeorm';
import { AccountWrites } from '../accounts/account-writes';
import { CLOCK } from '../clock/clock.token';
import { newId } from '../credentials/secrets';
import { OutboxRepository } from '../outbox/outbox.repository';
import { allowanceOf, capsOf } from '../state/account-state';
import { ChangeSignal } from './change-signal';
import {
  allowanceResetPostings,
  applyUsageCharge,
  chainSpendOf,
  chargeUsage,
  debtPaidBy,
  isLateUsage,
  nextExhaustedSince,
  periodBeganAt,
  planChangeGrant,
  planChangeTerms,
  type UsageCharge,
} from './ledger-math';
import { LedgerRepository, type BalanceRow, type JournalInput } from './ledger.repository';
import { TopUpsRepository, type TopUpRow } from './top-ups.repository';
import {
  aggregateParts,
  cuEndedBy,
  entriesOf,
  type AccountCharge,
  type FlushAggregate,
  type FlushPart,
} from '../usage/flush-aggregate';
import { UsageFlushesRepository, type ParkedEntry } from '../usage/usage-flushes.repository';

export interface UsageOutcome {
  /** applied: written now; duplicate: applied earlier (no-op); unknown_account: no such account. */
  status: 'applied' | 'duplicate' | 'unknown_account';
}

export const usageKey = (usageId: string) => `usage:${usageId}`;

/** One flush part as delivered (the stream position names its dead letters). */
export interface FlushDelivery {
  /** The part (its header and totals; its entries on demand: `flushPart`). */
  part: FlushPart;
  streamSequence: number;
  deliveryCount: number;
}

export interface FlushOutcome {
  /** applied: written now; duplicate: applied earlier or by a concurrent transaction (no-op). */
  status: 'applied' | 'duplicate';
  /** Account entries of this part parked for an unknown account (dead-lettered via the outbox). */
  parked: number;
}

export interface FlushBatchResult {
  outcomes: FlushOutcome[];
  /** Account items (node lines + webhook lines) applied by the transaction. */
  items: number;
  accounts: number;
}

/**
 * Every change of a balance: usage, allowance resets, plan changes, top-ups. Each is one
 * transaction that locks the account's balance row, writes a balanced journal with a unique
 * idempotency key, updates the running sums and bumps the account version.
 */
@Injectable()
export class LedgerService {
  constructor(
    private readonly ledger: LedgerRepository,
    private readonly topUps: TopUpsRepository,
    private readonly outbox: OutboxRepository,
    private readonly signal: ChangeSignal,
    private readonly flushes: UsageFlushesRepository,
    private readonly writes: AccountWrites,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Balance rows of new accounts, each with the first allowance of its plan (caller's
   * transaction; the accounts rows exist already). A constant number of statements per call.
   */
  async openAccounts(
    manager: EntityManager,
    accountIds: readonly string[],
    now: Date,
  ): Promise<void> {
    if (accountIds.length === 0) return;
    await this.ledger.insertBalances(manager, accountIds, now);
    const rows = [...(await this.ledger.lock(manager, accountIds)).values()];
    const journals: JournalInput[] = [];
    for (const row of rows) {
      const journal = this.resetAllowance(row, now, `open:${row.accountId}`, 'plan_change');
      if (journal) journals.push(journal);
      this.settle(row, now);
    }
    await this.ledger.insertJournals(manager, journals);
    await this.ledger.saveBalances(manager, rows, now);
  }

  /** In the account's turn (`AccountWrites`), as every request's write that locks its row. */
  async changePlan(
    accountId: string,
    plan: PlanOrNone,
    contract: ContractOverrides | null,
  ): Promise<BalanceRow> {
    const result = await this.writes.run(accountId, () =>
      this.changePlanNow(accountId, plan, contract),
    );
    this.signal.changed();
    return result;
  }

  private changePlanNow(
    accountId: string,
    plan: PlanOrNone,
    contract: ContractOverrides | null,
  ): Promise<BalanceRow> {
    const now = this.clock.now();
    return this.ledger.transaction(async (manager) => {
      const row = (await this.ledger.lock(manager, [accountId])).get(accountId);
      if (!row) throw new DomainError('not_found', 'not_found', 'account not found');
      const oldPlan = row.planId;
      if (oldPlan === plan && JSON.stringify(row.contract) === JSON.stringify(contract)) return row;
      // A period that ended before the change rolls first, at its own moment's rule (a new
      // chain, ADR 0109): the tick may not have reached it yet.
      const journals: JournalInput[] = [];
      this.rollIfDue(row, now, journals);
      // The one home of the plan-change rule (ADR 0109, amended): the anchor kept between paid
      // plans, a paid period left for Free resumed by a return before its end.
      const terms = planChangeTerms({
        now,
        fromPaid: isPaidPlan(oldPlan),
        toPaid: isPaidPlan(plan),
        anchor: row.renewalAnchor,
        periodEnd: row.periodEnd,
        chainSpent: row.chainSpent,
        left: row.leftPaid,
      });
      await this.ledger.setPlan(manager, accountId, {
        plan,
        contract,
        startedAt: now,
        anchor: terms.anchor,
        left: terms.left,
      });
      row.planId = plan;
      row.contract = contract;
      row.planStartedAt = now;
      row.renewalAnchor = terms.anchor;
      row.leftPaid = terms.left;
      row.version += 1;
      const journal = this.resetAllowance(
        row,
        now,
        `plan:${accountId}:${row.version}`,
        'plan_change',
        terms.spent,
      );
      if (journal) journals.push(journal);
      await this.ledger.insertJournals(manager, journals);
      this.settle(row, now, false);
      await this.ledger.saveBalances(manager, [row], now);
      await this.outbox.add(
        manager,
        'planChanged',
        {
          id: planChangedId(accountId, row.version),
          accountId,
          version: row.version,
          oldPlanId: oldPlan,
          newPlanId: plan,
          caps: capsOf(row),
          at: now.toISOString(),
        },
        now,
      );
      return row;
    });
  }

  /**
   * A pending top-up; `requestKey` makes a retried request return the first one. In the
   * account's turn (`AccountWrites`).
   */
  async createTopUp(
    accountId: string,
    cu: number,
    by: { source: 'account' | 'operator'; apiKeyId: string | null; createdBy: string | null },
    requestKey: string | null,
    clearingMs: number,
  ): Promise<TopUpRow> {
    const topUp = await this.writes.run(accountId, () =>
      this.createTopUpNow(accountId, cu, by, requestKey, clearingMs),
    );
    this.signal.changed();
    return topUp;
  }

  private createTopUpNow(
    accountId: string,
    cu: number,
    by: { source: 'account' | 'operator'; apiKeyId: string | null; createdBy: string | null },
    requestKey: string | null,
    clearingMs: number,
  ): Promise<TopUpRow> {
    const { source } = by;
    const now = this.clock.now();
    return this.ledger.transaction(async (manager) => {
      const row = (await this.ledger.lock(manager, [accountId])).get(accountId);
      if (!row) throw new DomainError('not_found', 'not_found', 'account not found');
      if (requestKey) {
        const existing = await this.topUps.findByRequestKey(manager, accountId, requestKey);
        if (existing) return existing;
      }
      const created = await this.topUps.insert(manager, {
        accountId,
        cu,
        source,
        requestKey,
        apiKeyId: by.apiKeyId,
        createdBy: by.createdBy,
        now,
        clearsAt: new Date(now.getTime() + clearingMs),
      });
      await this.ledger.insertJournals(manager, [
        {
          key: `topup:${created.id}`,
          accountId,
          kind: 'topup_created',
          amount: cu,
          occurredAt: now,
          detail: { topUpId: created.id, source },
          postings: [
            { ledger: 'topup_source', amount: -cu },
            { ledger: 'pending', amount: cu },
          ],
        },
      ]);
      row.pending += cu;
      this.settle(row, now);
      await this.ledger.saveBalances(manager, [row], now);
      return created;
    });
  }

  /** Clears every top-up whose clearing time has come (periodic tick; reads the injected clock). */
  async clearDueTopUps(limit = 200): Promise<number> {
    const now = this.clock.now();
    let cleared = 0;
    for (const due of await this.topUps.due(now, limit)) {
      const done = await this.ledger.transaction(async (manager) => {
        const row = (await this.ledger.lock(manager, [due.accountId])).get(due.accountId)!;
        // Re-read under the account lock: another replica may have cleared it meanwhile.
        if (!(await this.topUps.markCleared(manager, due.id, now))) return false;
        const journals: JournalInput[] = [];
        this.rollIfDue(row, now, journals);
        journals.push({
          key: `topup:${due.id}:cleared`,
          accountId: due.accountId,
          kind: 'topup_cleared',
          amount: due.cu,
          occurredAt: now,
          detail: { topUpId: due.id },
          postings: [
            { ledger: 'pending', amount: -due.cu },
            { ledger: 'purchased', amount: due.cu },
          ],
        });
        await this.ledger.insertJournals(manager, journals);
        row.pending -= due.cu;
        row.purchased += due.cu;
        this.settle(row, now);
        await this.ledger.saveBalances(manager, [row], now);
        await this.outbox.add(
          manager,
          'topUpCleared',
          {
            id: topUpClearedId(due.id),
            accountId: due.accountId,
            topUpId: due.id,
            cu: due.cu,
            purchasedCuAfter: row.purchased,
            clearedAt: now.toISOString(),
          },
          now,
        );
        return true;
      });
      if (done) cleared += 1;
    }
    if (cleared > 0) this.signal.changed();
    return cleared;
  }

  /** Starts the new allowance period of every account whose period has ended (periodic tick). */
  async resetDueAllowances(limit = 500): Promise<number> {
    const now = this.clock.now();
    let reset = 0;
    for (const accountId of await this.ledger.dueForReset(now, limit)) {
      const done = await this.ledger.transaction(async (manager) => {
        const row = (await this.ledger.lock(manager, [accountId])).get(accountId)!;
        const journals: JournalInput[] = [];
        if (!this.rollIfDue(row, now, journals)) return false;
        await this.ledger.insertJournals(manager, journals);
        this.settle(row, now);
        await this.ledger.saveBalances(manager, [row], now);
        return true;
      });
      if (done) reset += 1;
    }
    if (reset > 0) this.signal.changed();
    return reset;
  }

  /**
   * Applies usage events in one transaction. An event whose idempotency key is already in the
   * journal is a duplicate (redelivery, repeat publish, crash between commit and ack) and
   * changes nothing. The key check runs under the account row lock, so two replicas applying
   * the same event serialise and the second sees the first's commit.
   */
  async applyUsage(events: readonly UsageRecorded[]): Promise<UsageOutcome[]> {
    const now = this.clock.now();
    const touched = new Set<BalanceRow>();
    const wasExhausted = new Map<string, boolean>();
    const outcomes = await this.ledger.usageTransaction(async (manager) => {
      touched.clear();
      wasExhausted.clear();
      const rows = await this.ledger.lock(
        manager,
        events.map((e) => e.accountId),
      );
      const existing = await this.ledger.existingKeys(
        manager,
        events.map((e) => usageKey(e.id)),
      );
      const journals: JournalInput[] = [];
      const seen = new Set<string>();
      const rollups = new Map<
        string,
        {
          accountId: string;
          hour: string;
          network: string;
          method: string;
          calls: number;
          cu: number;
        }
      >();
      const results = events.map((event): UsageOutcome => {
        const row = rows.get(event.accountId);
        if (!row) return { status: 'unknown_account' };
        const key = usageKey(event.id);
        if (existing.has(key) || seen.has(key)) return { status: 'duplicate' };
        seen.add(key);
        if (!wasExhausted.has(row.accountId))
          wasExhausted.set(row.accountId, row.exhaustedSince !== null);
        this.rollIfDue(row, now, journals);
        const late = isLateUsage(event.windowEnd, row) ? event.totalCu : 0;
        const charge = charged(row, late, event.totalCu);
        journals.push({
          key,
          accountId: event.accountId,
          kind: 'usage',
          amount: event.totalCu,
          overdraft: charge.overdraft,
          occurredAt: new Date(event.windowEnd),
          detail: { kind: event.kind, producerId: event.producerId, ...lateDetail(row, charge) },
          postings: charge.postings,
        });
        touched.add(row);
        const hour = usageHourOf(event.windowStart);
        const items =
          event.kind === 'node'
            ? event.items.map((i) => ({
                network: i.network,
                method: i.method,
                calls: i.calls,
                cu: i.cu,
              }))
            : event.items.map((i) => ({
                network: 'webhooks',
                method: 'webhook_delivery',
                calls: i.attempts,
                cu: i.cu,
              }));
        for (const item of items) {
          const rollupKey = `${event.accountId}|${hour}|${item.network}|${item.method}`;
          const rollup = rollups.get(rollupKey) ?? {
            accountId: event.accountId,
            hour,
            network: item.network,
            method: item.method,
            calls: 0,
            cu: 0,
          };
          rollup.calls += item.calls;
          rollup.cu += item.cu;
          rollups.set(rollupKey, rollup);
        }
        return { status: 'applied' };
      });
      if (touched.size === 0) return results;
      const written = await this.ledger.insertJournals(manager, journals);
      if (written !== journals.length) {
        // The pre-check under the lock makes this unreachable; never commit sums without entries.
        throw new DomainError(
          'ledger_conflict',
          'unavailable',
          'a journal key appeared concurrently; retrying',
        );
      }
      for (const row of touched) this.settle(row, now);
      await this.ledger.saveBalances(manager, [...touched], now);
      await this.flushes.recordHourly(manager, [...rollups.values()], now);
      return results;
    });
    // The committed rows go to the balance-state publisher as they are (no read needed).
    if (touched.size > 0) {
      const flipped = new Set<string>();
      for (const row of touched)
        if ((row.exhaustedSince !== null) !== wasExhausted.get(row.accountId))
          flipped.add(row.accountId);
      this.signal.changed([...touched], flipped);
    }
    return outcomes;
  }

  /**
   * Applies usage flush parts with set-based statements in one transaction (ADR 0104): the
   * parts' ids are claimed in `usage_flushes` first (a part another transaction claimed is a
   * duplicate and adds nothing), then every account of the fresh parts gets ONE journal for the
   * whole batch (its CU summed across parts and producers), its running sums, and its hourly
   * rollups, each written by one statement for all accounts. Entries of accounts the ledger does
   * not know are parked in the same transaction and dead-lettered through the outbox. Nothing is
   * visible before the commit, so a crash at any point applies all of a part or none of it.
   *
   * `prepared`: the unique parts of `deliveries` already summed (the consumer sums them while the
   * previous transaction runs); used when every part turns out fresh, else the fresh ones are
   * summed again here.
   */
  async applyFlushes(
    deliveries: readonly FlushDelivery[],
    prepared?: FlushAggregate,
  ): Promise<FlushBatchResult> {
    const now = this.clock.now();
    const touched: BalanceRow[] = [];
    const flipped = new Set<string>();
    const byId = new Map<string, FlushDelivery>();
    for (const delivery of deliveries)
      if (!byId.has(delivery.part.id)) byId.set(delivery.part.id, delivery);
    const unique = [...byId.values()].map((d) => d.part);
    const result = await this.ledger.usageTransaction(async (manager) => {
      touched.length = 0;
      flipped.clear();
      // A new id per attempt: its journal keys cannot meet another transaction's. (It was the
      // smallest part id of the batch, which repeated a committed batch's keys when a copy of
      // that part came back with new parts: the transaction failed on every redelivery.)
      const batch = newId('bat');
      const fresh = await this.flushes.claim(manager, unique, batch, now);
      const parkedOf = new Map<string, number>();
      // One delivery per new id is the one applied; copies of it in the same batch (a redelivery
      // or repeat publish that arrived together with it) are duplicates like any later copy.
      const first = new Set<string>();
      const outcomes = deliveries.map((d): FlushOutcome => {
        const applied = fresh.has(d.part.id) && !first.has(d.part.id);
        if (applied) first.add(d.part.id);
        return { status: applied ? 'applied' : 'duplicate', parked: 0 };
      });
      if (fresh.size === 0) return { outcomes, items: 0, accounts: 0 };
      const aggregate =
        prepared !== undefined &&
        fresh.size === unique.length &&
        prepared.parts.length === unique.length
          ? prepared
          : aggregateParts(unique.filter((p) => fresh.has(p.id)));
      const rows = await this.ledger.lock(
        manager,
        aggregate.charges.map((c) => c.accountId),
      );
      const journals: JournalInput[] = [];
      const unknown = new Set<string>();
      // Periods first: what is late depends on the period each row is in once rolled (ADR 0108).
      const known: Array<{
        charge: AccountCharge;
        row: BalanceRow;
        late: number;
        wasExhausted: boolean;
      }> = [];
      const straddling = new Map<string, number>();
      for (const charge of aggregate.charges) {
        const row = rows.get(charge.accountId);
        if (row === undefined) {
          unknown.add(charge.accountId);
          continue;
        }
        const wasExhausted = row.exhaustedSince !== null;
        this.rollIfDue(row, now, journals);
        let late = 0;
        if (isLateUsage(charge.firstWindowEnd, row)) {
          if (isLateUsage(charge.lastWindowEnd, row)) late = charge.totalCu;
          else straddling.set(charge.accountId, periodBeganAt(row)!);
        }
        known.push({ charge, row, late, wasExhausted });
      }
      // An account whose parts in this batch lie on both sides of its period's start (rare: the
      // batches at the start): its parts are read again for the CU on the prior side.
      const lateOf = straddling.size === 0 ? undefined : cuEndedBy(aggregate.parts, straddling);
      for (const { charge, row, late: whole, wasExhausted } of known) {
        const late = lateOf?.get(charge.accountId) ?? whole;
        const split = charged(row, late, charge.totalCu);
        if (charge.totalCu > 0)
          journals.push({
            key: `flush:${batch}:${charge.accountId}`,
            accountId: charge.accountId,
            kind: 'usage',
            amount: charge.totalCu,
            overdraft: split.overdraft,
            occurredAt: new Date(charge.lastWindowEnd),
            detail: lateDetail(row, split),
            postings: split.postings,
          });
        this.settle(row, now);
        if ((row.exhaustedSince !== null) !== wasExhausted) flipped.add(row.accountId);
        touched.push(row);
      }
      const rollups =
        unknown.size === 0
          ? aggregate.rollups
          : aggregate.rollups.filter((r) => !unknown.has(r.accountId));
      // Keys carry this attempt's batch id (and a period's reset is rolled once, under the
      // row lock): none can exist, and one that did would fail the transaction, never commit
      // sums without entries (the consumer retries a failed batch).
      await this.ledger.insertJournals(manager, journals, 'new');
      await this.ledger.saveBalances(manager, touched, now);
      await this.flushes.recordHourly(manager, rollups, now);
      if (unknown.size > 0) {
        const parked: ParkedEntry[] = entriesOf(aggregate.parts, unknown).map(
          ({ flushId, entry }) => ({
            flushId,
            accountId: entry.accountId,
            kind: entry.kind,
            entry,
          }),
        );
        await this.flushes.park(manager, parked, now);
        for (const entry of parked) {
          parkedOf.set(entry.flushId, (parkedOf.get(entry.flushId) ?? 0) + 1);
          await this.outbox.add(
            manager,
            'usageParked',
            parkedLetter(byId.get(entry.flushId)!, entry, now),
            now,
          );
        }
      }
      for (const [i, d] of deliveries.entries())
        if (outcomes[i]!.status === 'applied') outcomes[i]!.parked = parkedOf.get(d.part.id) ?? 0;
      return { outcomes, items: aggregate.items, accounts: touched.length };
    });
    // The committed rows go to the balance-state publisher as they are (no read needed).
    if (touched.length > 0) this.signal.changed(touched, flipped);
    if (result.outcomes.some((o) => o.parked > 0)) this.signal.changed();
    return result;
  }

  /** Version bump and exhaustion bookkeeping after a change of the row. */
  private settle(row: BalanceRow, now: Date, bump = true): void {
    if (bump) row.version += 1;
    row.exhaustedSince = nextExhaustedSince(row, row.exhaustedSince, now);
  }

  /** Starts the period holding `now` if the current one has ended (Free: daily 07:30 UTC; paid: monthly). */
  private rollIfDue(row: BalanceRow, now: Date, journals: JournalInput[]): boolean {
    if (row.planId === null || (row.periodEnd !== null && row.periodEnd.getTime() > now.getTime()))
      return false;
    const journal = this.resetAllowance(row, now, undefined, 'allowance_reset');
    if (journal) journals.push(journal);
    return true;
  }

  /**
   * Expires what is left of the allowance (no rollover) and grants the allowance of the period
   * holding `now`; mutates `row`. The key defaults to the period, so one period is granted once.
   * A natural roll (`allowance_reset`) grants the full allowance and starts a new allowance
   * chain; a plan change (and an account's opening) grants the allowance less what the chain
   * spent (`planChangeGrant`, ADR 0109; `spent`: the plan change's terms) and continues it. A
   * paid plan's period is anchored at its renewal anchor; a plan change's begins at the change.
   * Either way the grant pays the account's debt first (`debtPaidBy`, ADR 0101 amendment), which
   * counts as spent of the chain: a plan change never grants it again.
   */
  private resetAllowance(
    row: BalanceRow,
    now: Date,
    key: string | undefined,
    kind: 'allowance_reset' | 'plan_change',
    spentOfChain = row.chainSpent,
  ): JournalInput | undefined {
    const allowance = allowanceOf(row);
    const spent = kind === 'plan_change' ? spentOfChain : 0;
    const grant = planChangeGrant(allowance, spent);
    const anchored = row.planId
      ? currentAllowanceWindow(row.planId, now, row.renewalAnchor)
      : undefined;
    const window =
      anchored && kind === 'plan_change' && isPaidPlan(row.planId)
        ? { start: now, end: anchored.end }
        : anchored;
    const debtPaid = debtPaidBy(grant, row.purchased);
    const postings = allowanceResetPostings(row.allowance, grant, debtPaid);
    // What the ending period left stays for its late usage (ADR 0108), if there was one.
    row.prior =
      window !== undefined && row.periodStart !== null ? Math.max(row.allowance, 0) : null;
    row.allowance = grant - debtPaid;
    row.purchased += debtPaid;
    // The period's allowance as the plan states it; what the chain spent shows as spent of it.
    row.allowanceTotal = allowance;
    row.chainSpent = spent + debtPaid;
    row.periodStart = window?.start ?? null;
    row.periodEnd = window?.end ?? null;
    if (postings.length === 0) return undefined;
    return {
      key:
        key ??
        `allowance:${row.accountId}:${row.planStartedAt.getTime()}:${window!.start.toISOString()}`,
      accountId: row.accountId,
      kind,
      amount: grant,
      occurredAt: now,
      detail: {
        planId: row.planId,
        periodStart: window?.start.toISOString() ?? null,
        periodEnd: window?.end.toISOString() ?? null,
        ...(spent > 0 ? { allowanceCu: allowance, chainSpentCu: spent } : {}),
        ...(debtPaid > 0 ? { debtPaidCu: debtPaid } : {}),
      },
      postings,
    };
  }
}

/** A plan whose allowance renews monthly at a renewal anchor (every plan but Free, and none). */
function isPaidPlan(plan: PlanOrNone): boolean {
  return plan !== null && PLANS[plan].allowance.period === 'month';
}

/**
 * Charges usage to `row` (ADR 0108) and counts what it spent of the allowance chain (ADR 0109):
 * late usage charged to a prior period counts when that period is of the same chain, i.e. the
 * current one began with a plan change (`plan_started_at` within it), not a natural roll.
 */
function charged(row: BalanceRow, lateCu: number, totalCu: number): UsageCharge {
  const charge = chargeUsage(row, lateCu, totalCu);
  const priorInChain =
    row.periodStart !== null && periodBeganAt(row) === row.planStartedAt.getTime();
  const spent = chainSpendOf(charge, priorInChain);
  Object.assign(row, applyUsageCharge(row, charge));
  row.chainSpent += spent;
  return charge;
}

/** The journal's note of late usage: how much, and the period whose prior paid it. */
function lateDetail(row: BalanceRow, charge: UsageCharge): Record<string, unknown> | null {
  const lateCu = charge.late.fromAllowance + charge.late.fromPurchased;
  if (lateCu === 0) return null;
  return { lateCu, priorOf: row.periodStart!.toISOString() };
}

/**
 * The dead letter of one parked account entry: its usage as a one-account `usage.recorded`
 * event, so an operator can re-publish `data` to `subject` once the account exists (applied
 * once: the id is unique to this flush part, kind and account).
 */
function parkedLetter(delivery: FlushDelivery, entry: ParkedEntry, now: Date): DeadLetter {
  const flush = delivery.part;
  const usage = {
    ...(entry.entry as UsageRecorded),
    id: `${flush.id}:${entry.kind}:${entry.accountId}`,
    producerId: flush.producerId,
    windowStart: flush.windowStart,
    windowEnd: flush.windowEnd,
  } as UsageRecorded;
  const durable = Consumers.ledgerUsage.durable;
  return {
    id: `${durable}:${delivery.streamSequence}:${entry.kind}:${entry.accountId}`,
    consumer: durable,
    stream: Consumers.ledgerUsage.stream,
    subject: Events.usageRecorded.subjectOf(usage),
    streamSequence: delivery.streamSequence,
    deliveryCount: delivery.deliveryCount,
    reason: 'permanent_error',
    error: { code: 'unknown_account', message: `usage for unknown account ${entry.accountId}` },
    msgId: usage.id,
    data: JSON.stringify(usage),
    deadLetteredAt: now.toISOString(),
  };
}
