import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Inject,
  Post,
  Put,
  Query,
  UseGuards,
} from '@nestjs/common';
import type { Clock } from '@meridian/time';
import { CLOCK } from '../clock/clock.token';
import { OperatorGuard } from '../http/auth.guards';
import { IdParam } from '../http/ids';
import { CredentialsService, type Created } from '../credentials/credentials.service';
import type { ApiKeyRow } from '../credentials/credentials.repository';
import {
  adminBulkCreateAccountsBody,
  adminCreateApiKeyBody,
  revokeCreatedByBody,
  adminCreateAccountBody,
  adminManagedKeysBody,
  adminPlanBody,
  contractOf,
  listQuery,
  planOfAccountType,
  topUpBody,
  usageQuery,
} from '../http/schemas';
import type { BalanceRow } from '../ledger/ledger.repository';
import { parseBody, parseQuery } from '../http/validation';
import { accountView, adminApiKeyView, apiKeyView, page, topUpView } from '../http/views';
import { AccountsRepository, type AccountSummaryRow } from './accounts.repository';
import { AccountsService, type NewAccount } from './accounts.service';
import {
  adminAccountsPage,
  adminAccountsQuery,
  adminApiKeysPage,
  adminApiKeysQuery,
} from './admin.schemas';
import type { z } from 'zod';
import {
  accountResponse,
  createdAccountResponse,
  createdAccountsResponse,
  createdApiKeyResponse,
  managedKeysResponse,
  revokedApiKeysResponse,
  topUpResponse,
  topUpsPage,
  usageResponse,
} from '../http/response.schemas';
import {
  idempotencyKeyHeader,
  idempotencyKeyOf,
  INVALID_IDEMPOTENCY_KEY,
} from '@meridian/platform-http';
import { operatorRoute, ROUTE_ERRORS } from '../http/route-errors';
import { ApiRoute } from '@meridian/platform-http/openapi';
import { ID_SCHEMAS } from '../ids';

function newAccountOf(input: z.output<typeof adminCreateAccountBody>): NewAccount {
  return {
    name: input.name,
    type: input.type,
    plan: input.plan === undefined ? (input.type === 'individual' ? 'free' : null) : input.plan,
    nodeOwner: input.node_owner,
    contract: contractOf(input.contract),
    apiKeyScopes: input.api_key_scopes,
    apiKeyManaged: input.api_key_managed,
  };
}

function summaryView(row: AccountSummaryRow): z.output<typeof adminAccountsPage>['items'][number] {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    plan: row.planId,
    node_owner: row.nodeOwner,
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * Operator API (OPERATOR_TOKEN): every account, however it was made (one by one, in bulk, by
 * the dashboard's sign-up): search and read them, set plans, credit top-ups.
 */
@Controller('api/v1/admin/accounts')
@UseGuards(OperatorGuard)
export class AdminController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly repository: AccountsRepository,
    private readonly credentials: CredentialsService,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Get()
  @ApiRoute({
    summary: 'Search accounts by id prefix or name, newest first (keyset pages)',
    auth: 'operator',
    query: adminAccountsQuery,
    responses: operatorRoute({
      400: ROUTE_ERRORS.invalidQuery,
      200: { description: 'a page of accounts', schema: adminAccountsPage },
    }),
  })
  async search(@Query() query: unknown) {
    const { q, limit, cursor } = parseQuery(adminAccountsQuery, query);
    const rows = await this.repository.search(q, limit + 1, cursor);
    const items = rows.slice(0, limit);
    return {
      items: items.map(summaryView),
      next_cursor: rows.length > limit ? items[items.length - 1]!.id : null,
    };
  }

  @Get(':id')
  @ApiRoute({
    params: { id: ID_SCHEMAS.acc },
    summary: 'One account: plan, caps and balance (as GET /account)',
    auth: 'operator',
    responses: operatorRoute({
      200: { description: 'the account', schema: accountResponse },
      404: ROUTE_ERRORS.accountNotFound,
    }),
  })
  async get(@IdParam('acc', 'account not found') id: string) {
    const [row, pending] = await Promise.all([
      this.accounts.get(id),
      this.accounts.pendingTopUps(id),
    ]);
    return accountView(row, pending, this.clock.now(), this.accounts.selfServiceBilling);
  }

  @Get(':id/usage')
  @ApiRoute({
    params: { id: ID_SCHEMAS.acc },
    summary: 'One account usage (as GET /account/usage)',
    auth: 'operator',
    query: usageQuery,
    responses: operatorRoute({
      200: { description: 'usage of the whole hours in [from, to)', schema: usageResponse },
      400: ROUTE_ERRORS.usageQuery,
      404: ROUTE_ERRORS.accountNotFound,
      503: ROUTE_ERRORS.usageUnavailable,
    }),
  })
  async usage(@IdParam('acc', 'account not found') id: string, @Query() query: unknown) {
    const q = parseQuery(usageQuery, query);
    await this.accounts.get(id);
    return this.accounts.usageReport(id, q);
  }

  @Get(':id/top-ups')
  @ApiRoute({
    params: { id: ID_SCHEMAS.acc },
    summary: 'One account top-ups (as GET /top-ups)',
    auth: 'operator',
    query: listQuery,
    responses: operatorRoute({
      200: { description: 'a page of top-ups', schema: topUpsPage },
      400: ROUTE_ERRORS.invalidQuery,
      404: ROUTE_ERRORS.accountNotFound,
    }),
  })
  async topUps(@IdParam('acc', 'account not found') id: string, @Query() query: unknown) {
    const { limit, cursor } = parseQuery(listQuery, query);
    await this.accounts.get(id);
    return page(await this.accounts.listTopUps(id, limit + 1, cursor), limit, topUpView);
  }

  @Post()
  @ApiRoute({
    summary:
      'Create an account and its first API key. Header Idempotency-Key: a repeat answers the ' +
      'same account with a new key, the earlier one revoked',
    auth: 'operator',
    body: adminCreateAccountBody,
    headers: { 'Idempotency-Key': idempotencyKeyHeader },
    responses: operatorRoute({
      201: { description: 'the account and its key', schema: createdAccountResponse },
      400: {
        description:
          `malformed_body: the body does not fit; ${INVALID_IDEMPOTENCY_KEY}; ` +
          ROUTE_ERRORS.contractNotEnterprise.description,
      },
      409: ROUTE_ERRORS.idempotencyKeyReused,
    }),
  })
  @HttpCode(201)
  async create(@Body() body: unknown, @Headers('idempotency-key') idempotencyKey?: string) {
    const input = parseBody(adminCreateAccountBody, body);
    const key = idempotencyKeyOf(idempotencyKey);
    // With a key: the request's repeat answers the account it made, with a new key (ADR 0110).
    return this.createdView(
      key
        ? await this.accounts.createOnce(newAccountOf(input), key, input)
        : (await this.accounts.createMany([newAccountOf(input)]))[0]!,
    );
  }

  /** Up to MAX_BULK_ACCOUNTS accounts in one transaction (all or none); answers in input order. */
  @Post('bulk')
  @ApiRoute({
    summary: 'Create up to 500 accounts in one transaction',
    auth: 'operator',
    body: adminBulkCreateAccountsBody,
    responses: operatorRoute({
      201: {
        description: 'the accounts and keys, in input order',
        schema: createdAccountsResponse,
      },
      400: {
        description: `${ROUTE_ERRORS.malformedBody.description}; ${ROUTE_ERRORS.contractNotEnterprise.description}`,
      },
    }),
  })
  @HttpCode(201)
  async createBulk(@Body() body: unknown) {
    const input = parseBody(adminBulkCreateAccountsBody, body);
    const created = await this.accounts.createMany(input.accounts.map(newAccountOf));
    return { items: created.map((c) => this.createdView(c)) };
  }

  /**
   * The keys the operator's side (the dashboard) holds, made before `api_key_managed` existed:
   * flagged managed like the ones made with it. Idempotent; revoked or unknown ids are skipped.
   */
  @Post('managed-keys')
  @ApiRoute({
    summary: 'Flag API keys as managed by the operator (the dashboard keys made before the flag)',
    auth: 'operator',
    body: adminManagedKeysBody,
    responses: operatorRoute({
      200: { description: 'how many keys were newly flagged', schema: managedKeysResponse },
      400: ROUTE_ERRORS.malformedBody,
    }),
  })
  @HttpCode(200)
  async markManaged(@Body() body: unknown) {
    const { api_key_ids } = parseBody(adminManagedKeysBody, body);
    return { flagged: await this.credentials.markManaged(api_key_ids) };
  }

  private createdView({ account, apiKey }: { account: BalanceRow; apiKey: Created<ApiKeyRow> }) {
    return {
      account: accountView(account, [], this.clock.now(), this.accounts.selfServiceBilling),
      api_key: apiKeyView(apiKey.row, apiKey.secret),
    };
  }

  @Put(':id/plan')
  @ApiRoute({
    params: { id: ID_SCHEMAS.acc },
    summary: 'Set an account plan (and Enterprise contract)',
    auth: 'operator',
    body: adminPlanBody,
    responses: operatorRoute({
      200: { description: 'the account', schema: accountResponse },
      400: {
        description:
          'malformed_body: the body does not fit, or plan is null for an individual account ' +
          '(only a team may have none); ' +
          ROUTE_ERRORS.contractNotEnterprise.description,
      },
      404: ROUTE_ERRORS.accountNotFound,
    }),
  })
  async setPlan(@IdParam('acc', 'account not found') id: string, @Body() body: unknown) {
    const input = parseBody(adminPlanBody, body);
    const { accountType } = await this.accounts.get(id);
    parseBody(planOfAccountType, { type: accountType, plan: input.plan });
    const row = await this.accounts.setPlan(id, input.plan, contractOf(input.contract));
    return accountView(
      row,
      await this.accounts.pendingTopUps(id),
      this.clock.now(),
      this.accounts.selfServiceBilling,
    );
  }

  /**
   * Every key of the account, managed ones (the dashboard's) and revoked ones included unless
   * `state` narrows them: how an operator finds the id of a key to revoke. The account API's
   * pages (`GET /api-keys`), newest first; never a secret nor its hash.
   */
  @Get(':id/api-keys')
  @ApiRoute({
    params: { id: ID_SCHEMAS.acc },
    summary: 'List the API keys of the account, managed (dashboard) and revoked ones included',
    auth: 'operator',
    query: adminApiKeysQuery,
    responses: operatorRoute({
      200: { description: 'a page of keys, newest first', schema: adminApiKeysPage },
      400: { description: 'invalid_query: limit, cursor or state does not fit' },
      404: ROUTE_ERRORS.accountNotFound,
    }),
  })
  async listApiKeys(@IdParam('acc', 'account not found') id: string, @Query() query: unknown) {
    const { limit, cursor, state } = parseQuery(adminApiKeysQuery, query);
    await this.accounts.get(id);
    return page(
      await this.credentials.listApiKeysForOperator(id, limit + 1, cursor, state),
      limit,
      adminApiKeyView,
    );
  }

  /**
   * A new key of the account, its secret shown once. Every account may get one: billing has no
   * closed or suspended account (a spent or plan-less one still reads its balance and tops up).
   * `managed: true` is the dashboard's replacement for the managed key the operator revoked
   * (ADR 0110 amendment): billing does not limit how many keys an account holds.
   */
  @Post(':id/api-keys')
  @ApiRoute({
    params: { id: ID_SCHEMAS.acc },
    summary: 'Create an API key of the account (shown once), managed (a dashboard key) or not',
    auth: 'operator',
    body: adminCreateApiKeyBody,
    responses: operatorRoute({
      201: { description: 'the key, with its secret', schema: createdApiKeyResponse },
      400: { description: 'malformed_body: the body does not fit (name, scopes, managed)' },
      404: ROUTE_ERRORS.accountNotFound,
    }),
  })
  @HttpCode(201)
  async createApiKey(@IdParam('acc', 'account not found') id: string, @Body() body: unknown) {
    const input = parseBody(adminCreateApiKeyBody, body);
    // Accounts are never deleted: one that exists now still exists at the insert.
    await this.accounts.get(id);
    const created = await this.credentials.createApiKey(id, input);
    return apiKeyView(created.row, created.secret);
  }

  /**
   * Every active key of the account that `created_by` names, those made by them included (they
   * inherit it): the dashboard's removal of a team member (ADR 0604), so nothing that member
   * made keeps working. Nothing to revoke is a 200 with an empty list (a retried removal).
   */
  @Post(':id/api-keys/revoke-created-by')
  @ApiRoute({
    params: { id: ID_SCHEMAS.acc },
    summary: 'Revoke the API keys of the account one maker made (created_by), managed or not',
    auth: 'operator',
    body: revokeCreatedByBody,
    responses: operatorRoute({
      200: { description: 'the keys revoked', schema: revokedApiKeysResponse },
      400: { description: 'malformed_body: the body does not fit (created_by)' },
      404: ROUTE_ERRORS.accountNotFound,
    }),
  })
  @HttpCode(200)
  async revokeCreatedBy(@IdParam('acc', 'account not found') id: string, @Body() body: unknown) {
    const { created_by } = parseBody(revokeCreatedByBody, body);
    await this.accounts.get(id);
    return { revoked: await this.credentials.revokeApiKeysCreatedBy(id, created_by) };
  }

  /** Any key of the account, managed ones included (the account API may not revoke those). */
  @Delete(':id/api-keys/:keyId')
  @ApiRoute({
    params: { id: ID_SCHEMAS.acc, keyId: ID_SCHEMAS.key },
    summary: 'Revoke an API key of the account, a managed one (the dashboard key) included',
    auth: 'operator',
    responses: operatorRoute({
      204: { description: 'revoked' },
      404: { description: 'not_found: no such account, or no active key of it with this id' },
    }),
  })
  @HttpCode(204)
  async revokeApiKey(
    @IdParam('acc', 'account not found') id: string,
    @IdParam('key', 'not found', 'keyId') keyId: string,
  ): Promise<void> {
    await this.credentials.revokeApiKey(id, keyId, 'operator');
  }

  @Post(':id/top-ups')
  @ApiRoute({
    params: { id: ID_SCHEMAS.acc },
    summary: 'Credit a top-up (pending like any other). Header Idempotency-Key',
    auth: 'operator',
    body: topUpBody,
    headers: { 'Idempotency-Key': idempotencyKeyHeader },
    responses: operatorRoute({
      201: { description: 'the pending top-up', schema: topUpResponse },
      400: ROUTE_ERRORS.topUpBody,
      404: ROUTE_ERRORS.accountNotFound,
      409: ROUTE_ERRORS.idempotencyKeyReused,
    }),
  })
  @HttpCode(201)
  async topUp(
    @IdParam('acc', 'account not found') id: string,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey?: string,
  ) {
    const { cu } = parseBody(topUpBody, body);
    return topUpView(
      await this.accounts.topUp(id, cu, { source: 'operator' }, idempotencyKeyOf(idempotencyKey)),
    );
  }
}
