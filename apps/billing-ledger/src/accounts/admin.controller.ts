import { Body, Controller, Headers, HttpCode, Inject, Post, Put, UseGuards } from '@nestjs/common';
import type { Clock } from '@meridian/time';
import { CLOCK } from '../clock/clock.token';
import { OperatorGuard } from '../http/auth.guards';
import { IdParam } from '../http/ids';
import type { Created } from '../credentials/credentials.service';
import type { ApiKeyRow } from '../credentials/credentials.repository';
import {
  adminBulkCreateAccountsBody,
  adminCreateAccountBody,
  adminPlanBody,
  contractOf,
  topUpBody,
} from '../http/schemas';
import type { BalanceRow } from '../ledger/ledger.repository';
import { parseBody } from '../http/validation';
import { accountView, apiKeyView, topUpView } from '../http/views';
import { requestKeyOf } from '../ledger/top-ups.controller';
import { AccountsService, type NewAccount } from './accounts.service';
import type { z } from 'zod';
import { ApiRoute } from '@meridian/platform-http/openapi';

function newAccountOf(input: z.output<typeof adminCreateAccountBody>): NewAccount {
  return {
    name: input.name,
    type: input.type,
    plan: input.plan === undefined ? (input.type === 'individual' ? 'free' : null) : input.plan,
    nodeOwner: input.node_owner,
    contract: contractOf(input.contract),
    apiKeyScopes: input.api_key_scopes,
  };
}

/** Operator API (OPERATOR_TOKEN): accounts, plans and credited top-ups. */
@Controller('api/v1/admin/accounts')
@UseGuards(OperatorGuard)
export class AdminController {
  constructor(
    private readonly accounts: AccountsService,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Post()
  @ApiRoute({
    summary: 'Create an account and its first API key',
    auth: 'operator',
    body: adminCreateAccountBody,
    responses: { 201: { description: 'the account and its key' } },
  })
  @HttpCode(201)
  async create(@Body() body: unknown) {
    const [created] = await this.accounts.createMany([
      newAccountOf(parseBody(adminCreateAccountBody, body)),
    ]);
    return this.createdView(created!);
  }

  /** Up to MAX_BULK_ACCOUNTS accounts in one transaction (all or none); answers in input order. */
  @Post('bulk')
  @ApiRoute({
    summary: 'Create up to 500 accounts in one transaction',
    auth: 'operator',
    body: adminBulkCreateAccountsBody,
    responses: { 201: { description: 'the accounts and keys, in input order' } },
  })
  @HttpCode(201)
  async createBulk(@Body() body: unknown) {
    const input = parseBody(adminBulkCreateAccountsBody, body);
    const created = await this.accounts.createMany(input.accounts.map(newAccountOf));
    return { items: created.map((c) => this.createdView(c)) };
  }

  private createdView({ account, apiKey }: { account: BalanceRow; apiKey: Created<ApiKeyRow> }) {
    return {
      account: accountView(account, [], this.clock.now()),
      api_key: apiKeyView(apiKey.row, apiKey.secret),
    };
  }

  @Put(':id/plan')
  @ApiRoute({
    summary: 'Set an account plan (and Enterprise contract)',
    auth: 'operator',
    body: adminPlanBody,
  })
  async setPlan(@IdParam('acc', 'account not found') id: string, @Body() body: unknown) {
    const input = parseBody(adminPlanBody, body);
    const row = await this.accounts.setPlan(id, input.plan, contractOf(input.contract));
    return accountView(row, await this.accounts.pendingTopUps(id), this.clock.now());
  }

  @Post(':id/top-ups')
  @ApiRoute({
    summary: 'Credit a top-up (pending like any other). Header Idempotency-Key',
    auth: 'operator',
    body: topUpBody,
    responses: { 201: { description: 'the pending top-up' } },
  })
  @HttpCode(201)
  async topUp(
    @IdParam('acc', 'account not found') id: string,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey?: string,
  ) {
    const { cu } = parseBody(topUpBody, body);
    return topUpView(await this.accounts.topUp(id, cu, 'operator', requestKeyOf(idempotencyKey)));
  }
}
