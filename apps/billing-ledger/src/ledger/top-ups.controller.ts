import { Body, Controller, Get, Headers, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { AccountsService } from '../accounts/accounts.service';
import { AccountId, AccountKeyGuard } from '../http/auth.guards';
import { topUpResponse, topUpsPage } from '../http/response.schemas';
import { listQuery, topUpBody } from '../http/schemas';
import { parseBody, parseQuery } from '../http/validation';
import { page, topUpView } from '../http/views';
import { ApiRoute } from '@meridian/platform-http/openapi';

/** Optional `Idempotency-Key` header: a retried request answers the top-up it created first. */
export function requestKeyOf(header: string | undefined): string | null {
  if (header === undefined) return null;
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(header))
    throw new DomainError(
      'invalid_idempotency_key',
      'invalid',
      'Idempotency-Key: 1-128 of A-Z a-z 0-9 . _ : -',
    );
  return header;
}

@Controller('api/v1/top-ups')
@UseGuards(AccountKeyGuard)
export class TopUpsController {
  constructor(private readonly accounts: AccountsService) {}

  @Post()
  @ApiRoute({
    summary: 'Buy CU (recorded as bought; pending until it clears). Header Idempotency-Key',
    body: topUpBody,
    responses: { 201: { description: 'the pending top-up', schema: topUpResponse } },
  })
  @HttpCode(201)
  async create(
    @AccountId() accountId: string,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey?: string,
  ) {
    const { cu } = parseBody(topUpBody, body);
    return topUpView(
      await this.accounts.topUp(accountId, cu, 'account', requestKeyOf(idempotencyKey)),
    );
  }

  @Get()
  @ApiRoute({
    summary: 'List top-ups',
    query: listQuery,
    responses: { 200: { description: 'a page of top-ups', schema: topUpsPage } },
  })
  async list(@AccountId() accountId: string, @Query() query: unknown) {
    const { limit, cursor } = parseQuery(listQuery, query);
    return page(await this.accounts.listTopUps(accountId, limit + 1, cursor), limit, topUpView);
  }
}
