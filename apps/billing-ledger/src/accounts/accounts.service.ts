import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import type { ContractOverrides, PlanOrNone } from '@meridian/plans';
import type { Clock } from '@meridian/time';
import { DataSource, type EntityManager } from 'typeorm';
import { CLOCK } from '../clock/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { CredentialsService, actingPerson, type Created } from '../credentials/credentials.service';
import type { ApiKeyRow } from '../credentials/credentials.repository';
import { newId } from '../credentials/secrets';
import { IdempotencyKeys } from '../idempotency/idempotency-keys.service';
import { ChangeSignal } from '../ledger/change-signal';
import { LedgerRepository, type BalanceRow } from '../ledger/ledger.repository';
import { LedgerService } from '../ledger/ledger.service';
import { TopUpsRepository, type TopUpRow } from '../ledger/top-ups.repository';
import { HourlyFolder } from '../usage/hourly-folder.service';
import { AccountRequestsRepository } from './account-requests.repository';
import { usageWindowOf } from './usage-window';

export interface NewAccount {
  name: string;
  type: 'individual' | 'team';
  plan: PlanOrNone;
  nodeOwner: boolean;
  contract: ContractOverrides | null;
  apiKeyScopes: string[];
  /** The first key is held by the operator's side (the dashboard): `ApiKeyRow.managed`. */
  apiKeyManaged: boolean;
}

export type UsageGrouping = 'day' | 'network' | 'method' | 'day_network';

export interface UsageLine {
  day?: string;
  network?: string;
  method?: string;
  calls: number;
  cu: number;
}

export interface UsageReport {
  from: string;
  to: string;
  group_by: UsageGrouping;
  items: UsageLine[];
  total_cu: number;
  total_calls: number;
}

/** The operation an `Idempotency-Key` of `POST /admin/accounts` is bound to. */
const ACCOUNT_CREATE = 'account-create';

const notFound = () => new DomainError('not_found', 'not_found', 'account not found');

/**
 * A contract is Enterprise's alone (its caps override Premium's); on any other plan it would be
 * stored and never apply. So the operator routes refuse it: 400 `contract_not_enterprise`
 * (QA: `PUT /admin/accounts/{id}/plan {"plan":"starter","contract":{…}}` answered 200 and
 * dropped it). `where`: the body member named in the message.
 */
export function requireEnterpriseContract(
  plan: PlanOrNone,
  contract: ContractOverrides | null,
  where = 'body.contract',
): void {
  if (contract === null || plan === 'enterprise') return;
  throw new DomainError(
    'contract_not_enterprise',
    'invalid',
    `${where}: a contract is only for the enterprise plan, not ${plan === null ? 'no plan' : `plan ${plan}`}`,
    { details: { location: 'body', path: where } },
  );
}

@Injectable()
export class AccountsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly ledgerRepository: LedgerRepository,
    private readonly ledger: LedgerService,
    private readonly credentials: CredentialsService,
    private readonly topUps: TopUpsRepository,
    private readonly signal: ChangeSignal,
    private readonly hourly: HourlyFolder,
    private readonly idempotency: IdempotencyKeys,
    private readonly accountRequests: AccountRequestsRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Operator: a new account with its plan's first allowance and an initial API key (shown once). */
  async create(input: NewAccount): Promise<{ account: BalanceRow; apiKey: Created<ApiKeyRow> }> {
    return (await this.createMany([input]))[0]!;
  }

  /**
   * Operator: several accounts in one transaction (all or none), in input order. Same rules as
   * `create`; a constant number of statements however many accounts (bounded by the API).
   */
  async createMany(
    inputs: readonly NewAccount[],
  ): Promise<Array<{ account: BalanceRow; apiKey: Created<ApiKeyRow> }>> {
    if (inputs.length === 0) return [];
    for (const [i, input] of inputs.entries())
      requireEnterpriseContract(
        input.plan,
        input.contract,
        inputs.length > 1 ? `body.accounts[${i}].contract` : 'body.contract',
      );
    const now = this.clock.now();
    const made = await this.dataSource.transaction((manager) =>
      this.insertAccounts(manager, inputs, now),
    );
    this.signal.changed();
    const accounts = new Map(
      (await this.ledgerRepository.findMany(made.map((m) => m.accountId))).map((row) => [
        row.accountId,
        row,
      ]),
    );
    return made.map((m) => ({ account: accounts.get(m.accountId)!, apiKey: m.apiKey }));
  }

  /**
   * Operator, `POST /admin/accounts` with an `Idempotency-Key` (ADR 0110 amendment): the key's
   * first use makes the account as `create` does and binds the key to `request` (the validated
   * body) in the new account's key space; the same request again answers that account with a
   * new initial key, the one the earlier answer carried revoked (its secret was shown once and
   * is not stored, so a caller repeating the request does not hold it); the key with another
   * request is 409 `idempotency_key_reused` and changes nothing. Requests with one key run one
   * after the other (`AccountRequestsRepository.lock`): two repeats at once make one account,
   * and only the later answer's key stays active. Billing keeps the key as long as the account.
   */
  async createOnce(
    input: NewAccount,
    requestKey: string,
    request: unknown,
  ): Promise<{ account: BalanceRow; apiKey: Created<ApiKeyRow> }> {
    requireEnterpriseContract(input.plan, input.contract);
    const now = this.clock.now();
    const made = await this.dataSource.transaction(async (manager) => {
      await this.accountRequests.lock(manager, requestKey);
      const earlier = await this.accountRequests.find(manager, requestKey);
      if (earlier) {
        await this.idempotency.claim(
          earlier.accountId,
          requestKey,
          ACCOUNT_CREATE,
          request,
          manager,
        );
        const apiKey = await this.credentials.reissueInitialApiKey(
          manager,
          earlier.accountId,
          earlier.apiKeyId,
          { scopes: input.apiKeyScopes, managed: input.apiKeyManaged },
        );
        await this.accountRequests.answered(manager, requestKey, apiKey.row.id, now);
        return { accountId: earlier.accountId, apiKey };
      }
      const [first] = await this.insertAccounts(manager, [input], now);
      await this.idempotency.claim(first!.accountId, requestKey, ACCOUNT_CREATE, request, manager);
      await this.accountRequests.insert(
        manager,
        requestKey,
        { accountId: first!.accountId, apiKeyId: first!.apiKey.row.id },
        now,
      );
      return first!;
    });
    this.signal.changed();
    return { account: await this.get(made.accountId), apiKey: made.apiKey };
  }

  /** The accounts, their ledgers and initial keys (caller's transaction), in input order. */
  private async insertAccounts(
    manager: EntityManager,
    inputs: readonly NewAccount[],
    now: Date,
  ): Promise<Array<{ accountId: string; apiKey: Created<ApiKeyRow> }>> {
    const ids = inputs.map(() => newId('acc'));
    await manager.query(
      `INSERT INTO billing.accounts (id, name, type, plan_id, node_owner, contract, plan_started_at, created_at, updated_at)
       SELECT v.id, v.name, v.type, v.plan_id, v.node_owner, v.contract, $7, $7, $7
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::jsonb[])
              AS v(id, name, type, plan_id, node_owner, contract)`,
      [
        ids,
        inputs.map((i) => i.name),
        inputs.map((i) => i.type),
        inputs.map((i) => i.plan),
        inputs.map((i) => i.nodeOwner),
        inputs.map((i) => (i.contract ? JSON.stringify(i.contract) : null)),
        now.toISOString(),
      ],
    );
    await this.ledger.openAccounts(manager, ids, now);
    const apiKeys = await this.credentials.createInitialApiKeys(
      manager,
      inputs.map((input, i) => ({
        accountId: ids[i]!,
        scopes: input.apiKeyScopes,
        managed: input.apiKeyManaged,
      })),
    );
    return ids.map((accountId, i) => ({ accountId, apiKey: apiKeys[i]! }));
  }

  async get(accountId: string): Promise<BalanceRow> {
    const row = await this.ledgerRepository.find(accountId);
    if (!row) throw notFound();
    return row;
  }

  async setPlan(
    accountId: string,
    plan: PlanOrNone,
    contract: ContractOverrides | null,
  ): Promise<BalanceRow> {
    // The account route carries the stored contract when the plan stays: no change, no refusal.
    if (contract !== null && plan !== 'enterprise') {
      const current = await this.get(accountId);
      if (current.planId !== plan || JSON.stringify(current.contract) !== JSON.stringify(contract))
        requireEnterpriseContract(plan, contract);
    }
    await this.ledger.changePlan(accountId, plan, contract);
    return this.get(accountId);
  }

  /** Whether accounts buy their own top-ups and change their own plan (`SELF_SERVICE_BILLING`). */
  get selfServiceBilling(): boolean {
    return this.config.SELF_SERVICE_BILLING;
  }

  /**
   * The account's own top-ups and plan changes, refused unless the deployment lets accounts
   * pay for themselves: otherwise the operator API is the only way CU and plans are granted.
   */
  requireSelfService(): void {
    if (!this.config.SELF_SERVICE_BILLING)
      throw new DomainError(
        'self_service_disabled',
        'forbidden',
        'top-ups and plan changes are made by the operator of this service',
      );
  }

  /**
   * A top-up, pending until it clears. `by`: the operator, or the account's key and the person
   * it names (`createdBy`, a managed key only: `actingPerson`), recorded as who bought it.
   */
  async topUp(
    accountId: string,
    cu: number,
    by: { source: 'operator' } | { source: 'account'; key: ApiKeyRow; createdBy?: string },
    requestKey: string | null,
  ): Promise<TopUpRow> {
    const { source } = by;
    if (source === 'account') this.requireSelfService();
    const createdBy = by.source === 'account' ? actingPerson(by.key, by.createdBy) : null;
    await this.get(accountId);
    // The key binds to this request first: reused with another amount or by the other top-up
    // route it is refused; a retry of the same request answers the top-up it created first.
    // A named buyer is part of the request (absent, the fingerprint is the one from before).
    if (requestKey)
      await this.idempotency.claim(accountId, requestKey, `top-up:${source}`, {
        cu,
        ...(by.source === 'account' && by.createdBy !== undefined
          ? { created_by: by.createdBy }
          : {}),
      });
    return this.ledger.createTopUp(
      accountId,
      cu,
      { source, apiKeyId: by.source === 'account' ? by.key.id : null, createdBy },
      requestKey,
      this.config.TOPUP_CLEARING_MS,
    );
  }

  listTopUps(accountId: string, limit: number, cursor?: string): Promise<TopUpRow[]> {
    return this.topUps.list(accountId, limit, cursor);
  }

  pendingTopUps(accountId: string): Promise<TopUpRow[]> {
    return this.topUps.pendingOf(accountId);
  }

  /**
   * The usage answer of the account API and the operator API: `from`/`to` default to the last
   * 30 days, may span at most 366 and are snapped to whole hours (`usageWindowOf`); the answer
   * states the snapped bounds it counted.
   */
  async usageReport(
    accountId: string,
    query: { from?: string; to?: string; group_by: UsageGrouping },
  ): Promise<UsageReport> {
    const { from, to } = usageWindowOf(query, this.clock.now());
    const items = await this.usage(accountId, from, to, query.group_by);
    return {
      from: from.toISOString(),
      to: to.toISOString(),
      group_by: query.group_by,
      items,
      total_cu: items.reduce((sum, line) => sum + line.cu, 0),
      total_calls: items.reduce((sum, line) => sum + line.calls, 0),
    };
  }

  /**
   * Usage from the hourly rollups of the hours starting in [from, to) (whole hours: see
   * `usageWindowOf`). What usage transactions recorded is folded first, so every committed
   * charge is in the answer.
   */
  async usage(
    accountId: string,
    from: Date,
    to: Date,
    groupBy: UsageGrouping,
  ): Promise<UsageLine[]> {
    const group = {
      day: { select: `to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day`, by: '1', order: '1' },
      network: { select: 'network', by: 'network', order: 'cu DESC, network' },
      day_network: {
        select: `to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, network`,
        by: '1, network',
        order: '1, cu DESC, network',
      },
      method: {
        select: 'network, method',
        by: 'network, method',
        order: 'cu DESC, network, method',
      },
    }[groupBy];
    try {
      await this.hourly.fold();
    } catch (error) {
      // Never an answer that silently misses committed usage: unavailable, retry later.
      throw new DomainError(
        'usage_unavailable',
        'unavailable',
        'hourly usage could not be brought up to date; retry later',
        { cause: error },
      );
    }
    const rows: Array<{
      day?: string;
      network?: string;
      method?: string;
      calls: string;
      cu: string;
    }> = await this.dataSource.query(
      `SELECT ${group.select}, sum(calls) AS calls, sum(cu) AS cu FROM billing.usage_hourly
        WHERE account_id = $1 AND hour >= date_trunc('hour', $2::timestamptz) AND hour < $3
        GROUP BY ${group.by} ORDER BY ${group.order}`,
      [accountId, from.toISOString(), to.toISOString()],
    );
    return rows.map(({ calls, cu, ...key }) => ({ ...key, calls: Number(calls), cu: Number(cu) }));
  }
}
