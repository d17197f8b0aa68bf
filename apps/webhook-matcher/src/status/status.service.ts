import { Inject, Injectable } from '@nestjs/common';
import {
  capExceeded,
  EVERY_PLAN_WEBHOOK_CAPS,
  isPlanId,
  isPlanRequired,
  planFitCounts,
  type WebhookCaps,
} from '@meridian/plans';
import type { Clock } from '@meridian/time';
import {
  balanceForResume,
  DEFAULT_SERVICE_DECISIONS,
  shouldAutoPause,
  shouldPauseForNoBalance,
  transition,
  webhookNotFound,
  type ServiceDecisionSettings,
  type StatusTrigger,
  type TransitionFacts,
  type TransitionResult,
} from '@meridian/webhooks';
import { DataSource, type EntityManager } from 'typeorm';
import { AccountWrites } from '../accounts/account-writes';
import { AccountsRepository } from '../accounts/accounts.repository';
import { AddressListsRepository } from '../address-lists/address-lists.repository';
import {
  CREDENTIAL_SOURCE,
  type AccountFacts,
  type CredentialSource,
} from '../auth/credential-source';
import { CLOCK } from '../common/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { checkIfMatch, type IfMatch } from '../http/if-match';
import { WebhooksRepository, type WebhookRow } from '../webhooks/webhooks.repository';
import { DeliveriesRepository } from '../deliveries/deliveries.repository';
import { recordChange } from './change-log';
import { StatusHistoryRepository, type StatusActor } from './status-history.repository';
import { StatusPublisher } from './status-publisher.service';

/** billing's resolved caps plus the every-plan body cap (not part of billing's message). */
export function webhookCapsOf(facts: AccountFacts): WebhookCaps {
  return { ...facts.caps, maxBodyBytes: EVERY_PLAN_WEBHOOK_CAPS.maxBodyBytes };
}

/**
 * A team account without a plan (403 plan_required): the one reading of billing's facts that
 * create, resume, update and `GET /webhooks/limits` share (`isPlanRequired` of @meridian/plans).
 */
export function planRequiredOf(facts: AccountFacts): boolean {
  return isPlanRequired({
    plan: isPlanId(facts.planId) ? facts.planId : null,
    nodeOwner: facts.nodeOwner,
  });
}

/**
 * Every status change goes through here: the pure status machine decides (libs/domain/webhooks
 * status-machine), this service gathers the facts it needs, writes the change with its history
 * and change-feed row in the caller's transaction, and publishes the KV entry after the commit.
 */
@Injectable()
export class StatusService {
  readonly decisions: ServiceDecisionSettings;

  constructor(
    private readonly dataSource: DataSource,
    private readonly writes: AccountWrites,
    private readonly webhooks: WebhooksRepository,
    private readonly lists: AddressListsRepository,
    private readonly accounts: AccountsRepository,
    private readonly history: StatusHistoryRepository,
    private readonly publisher: StatusPublisher,
    private readonly deliveries: DeliveriesRepository,
    @Inject(CREDENTIAL_SOURCE) private readonly credentials: CredentialSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.decisions = {
      ...DEFAULT_SERVICE_DECISIONS,
      autoPauseAfterMs: config.AUTO_PAUSE_AFTER_MS,
      autoPauseMinAttempts: config.AUTO_PAUSE_MIN_ATTEMPTS,
      noBalancePauseAfterMs: config.NO_BALANCE_PAUSE_AFTER_MS,
    };
  }

  /** Applies a decided transition to `row` in `m` (history + change feed); refusals throw. */
  async apply(
    m: EntityManager,
    row: WebhookRow,
    trigger: StatusTrigger,
    result: TransitionResult,
    actor: StatusActor,
  ): Promise<WebhookRow> {
    if (result.kind === 'refused') throw result.error;
    if (result.kind === 'unchanged') return row;
    const now = this.clock.now();
    // An owner resume says the endpoint is fixed (spec: "paused_auto | resume | endpoint fixed
    // first"): the failing run that led to a pause does not carry over (ADR 0401 amendment).
    const resumed = trigger === 'owner_resume' && result.to === 'active';
    const updated = await this.webhooks.setStatus(m, row.id, result.to, now, resumed);
    if (resumed) await this.deliveries.restartFailingRun(m, row.id);
    await this.history.record(m, {
      webhookId: row.id,
      accountId: row.account_id,
      from: result.from,
      to: result.to,
      trigger,
      actor,
      dropReason: result.dropReason,
      at: now,
    });
    await recordChange(m, { accountId: row.account_id, webhookId: row.id });
    return updated;
  }

  /** Whether each non-deleted webhook of the account fits `facts`' plan (newest first). */
  async planFitOf(
    m: EntityManager,
    facts: AccountFacts,
  ): Promise<Map<string, TransitionFacts['planFit']>> {
    const caps = webhookCapsOf(facts);
    const counted = await this.webhooks.counted(m, facts.accountId);
    const sizes = await this.lists.sizes(m, facts.accountId);
    const out = new Map<string, TransitionFacts['planFit']>();
    for (const [id, over] of planFitCounts(caps, counted, sizes))
      out.set(
        id,
        over === null
          ? { fits: true }
          : { fits: false, error: capExceeded(over.cap, caps[over.cap], over.requested) },
      );
    return out;
  }

  /**
   * POST pause / resume, DELETE: one transaction under the account lock. `ifMatch` (DELETE's
   * If-Match; null: none) is checked under the webhook's row lock before the change (ADR 0404).
   */
  async ownerAction(
    accountId: string,
    webhookId: string,
    trigger: 'owner_pause' | 'owner_resume' | 'owner_delete',
    ifMatch: IfMatch | null = null,
  ): Promise<WebhookRow> {
    // A resume decides on caps and the balance: read them fresh from billing.
    const fresh =
      trigger === 'owner_resume' ? await this.credentials.accountFacts(accountId) : null;
    let changed = false;
    const row = await this.writes.transaction(accountId, async (m) => {
      const facts = fresh
        ? await this.accounts.lockWith(m, fresh)
        : await this.accounts.lock(m, accountId);
      const current = await this.webhooks.find(m, accountId, webhookId, true);
      if (!current || !facts) throw webhookNotFound();
      checkIfMatch(ifMatch, current.version);
      const transitionFacts: TransitionFacts =
        trigger === 'owner_resume'
          ? {
              planRequired: planRequiredOf(facts),
              planFit: (await this.planFitOf(m, facts)).get(current.id),
              balance: balanceForResume(facts),
            }
          : {};
      const result = transition(current.status, trigger, transitionFacts);
      changed = result.kind === 'change';
      return this.apply(m, current, trigger, result, 'owner');
    });
    // A repeat (a pause of a paused webhook, a resume of an active one) changed nothing: its
    // version was published with the change that made it (or is by the publisher's tick).
    if (changed) await this.publisher.publish([row.id]);
    return row;
  }

  /**
   * A plan change (billing's plan event): under the account lock, active webhooks that no longer
   * fit go to paused_plan and paused_plan ones that fit again resume, newest first. Owner and
   * other service pauses are untouched. Idempotent: a redelivered event changes nothing more.
   */
  async applyPlan(facts: AccountFacts): Promise<string[]> {
    const changed = await this.writes.transaction(facts.accountId, async (m) => {
      const stored = await this.accounts.lockWith(m, facts);
      const fit = await this.planFitOf(m, stored);
      const ids: string[] = [];
      for (const [id, planFitOfWebhook] of fit) {
        const row = (await this.webhooks.find(m, stored.accountId, id, true))!;
        if (row.status !== 'active' && row.status !== 'paused_plan') continue;
        const result = transition(row.status, 'plan_change', { planFit: planFitOfWebhook });
        if (result.kind !== 'change') continue;
        await this.apply(m, row, 'plan_change', result, 'billing');
        ids.push(id);
      }
      return ids;
    });
    await this.publisher.publish(changed);
    return changed;
  }

  /**
   * Stores balance facts from billing's balance event (newer version wins). Accounts this app
   * has never seen are skipped: every account's balance moves every second under load, and an
   * account without webhooks has nothing here to decide (its first API call stores its facts).
   */
  async recordBalance(facts: AccountFacts): Promise<{ planChanged: boolean }> {
    return this.writes.transaction(facts.accountId, async (m) => {
      const before = await this.accounts.lock(m, facts.accountId);
      if (before === null) return { planChanged: false };
      const after = await this.accounts.lockWith(m, facts);
      const planChanged =
        before.planId !== after.planId ||
        JSON.stringify(before.caps) !== JSON.stringify(after.caps);
      return { planChanged };
    });
  }

  /**
   * Service decision fed by delivery outcomes: 30 minutes of failing deliveries with at least 20
   * attempts → paused_auto (queued events dropped as auto_paused). Returns whether it paused.
   *
   * `seen` is the failing run as the caller read it (the consumer's just-recorded counters, the
   * sweep's candidate row): only a filter, so a run that is not due opens no transaction. The
   * decision itself reads the run again inside its transaction, after the webhook's row lock,
   * with `FOR SHARE` on the `delivery_stats` row (`lockedFailingRun`): a success recorded after
   * the caller's read, or still committing, ends the run before the decision and wins.
   */
  async applyDeliveryHealth(
    webhookId: string,
    seen: { failingSince: Date | null; attemptsSinceFailing: number },
  ): Promise<boolean> {
    if (!shouldAutoPause({ ...seen, now: this.clock.now() }, this.decisions)) return false;
    return this.serviceDecision(webhookId, 'auto_pause', async (m) => {
      const run = await this.deliveries.lockedFailingRun(m, webhookId);
      return shouldAutoPause({ ...run, now: this.clock.now() }, this.decisions);
    });
  }

  /**
   * Service decision: 30 minutes at zero balance (billing's exhaustedSince, as last heard) while
   * the webhook has events to deliver → paused_no_balance (queued events dropped as no_balance).
   *
   * `exhaustedSince` is read inside the decision's transaction under the account's row lock
   * (`FOR SHARE`, taken before the webhook's, the order every account-wide write takes them),
   * so a top-up that cleared it, committed or committing, wins. "Events to deliver" stays the
   * caller's fact: it only depends on `exhaustedSince` (attempts at or after it), and any change
   * of that (cleared, or a new exhaustion minutes old) already makes the rule say no.
   */
  async applyNoBalance(
    webhookId: string,
    facts: { hasEventsToDeliver: boolean },
  ): Promise<boolean> {
    if (!facts.hasEventsToDeliver) return false;
    return this.serviceDecision(
      webhookId,
      'no_balance',
      async (m) => {
        // The account's row is locked already (accountFirst): this reads it as committed last.
        const account: { exhausted_since: Date | null }[] = await m.query(
          `SELECT a.exhausted_since FROM webhooks.accounts a
             JOIN webhooks.webhooks w USING (account_id) WHERE w.id = $1`,
          [webhookId],
        );
        return shouldPauseForNoBalance(
          {
            exhaustedSince: account[0]?.exhausted_since ?? null,
            hasEventsToDeliver: true,
            now: this.clock.now(),
          },
          this.decisions,
        );
      },
      true,
    );
  }

  /**
   * Takes a service decision in one transaction: the webhook's row lock (`FOR UPDATE`), then
   * `due(m)`, which reads the rule's facts under their own locks after it, then the transition
   * (only from active). With `accountFirst`, `due` locks the account row, so it is taken here
   * first: account before webhook, as owner actions and plan changes take them (no deadlock).
   */
  private async serviceDecision(
    webhookId: string,
    trigger: 'auto_pause' | 'no_balance',
    due: (m: EntityManager) => Promise<boolean>,
    accountFirst = false,
  ): Promise<boolean> {
    const changed = await this.dataSource.transaction(async (m) => {
      if (accountFirst)
        await m.query(
          `SELECT 1 FROM webhooks.accounts a JOIN webhooks.webhooks w USING (account_id)
            WHERE w.id = $1 FOR SHARE OF a`,
          [webhookId],
        );
      const rows: WebhookRow[] = await m.query(
        `SELECT * FROM webhooks.webhooks WHERE id = $1 FOR UPDATE`,
        [webhookId],
      );
      const row = rows[0];
      if (!row) return false;
      const result = transition(row.status, trigger);
      if (result.kind !== 'change') return false;
      if (!(await due(m))) return false;
      await this.apply(m, row, trigger, result, 'service');
      return true;
    });
    if (changed) await this.publisher.publish([webhookId]);
    return changed;
  }
}
