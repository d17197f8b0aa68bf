import { Body, Controller, Get, Headers, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { AccountsService } from '../accounts/accounts.service';
import { AccountKeyGuard, CallerKey } from '../http/auth.guards';
import type { ApiKeyRow } from '../credentials/credentials.repository';
import { topUpResponse, topUpsPage } from '../http/response.schemas';
import { accountTopUpBody, listQuery } from '../http/schemas';
import { parseBody, parseQuery } from '../http/validation';
import { page, topUpView } from '../http/views';
import { idempotencyKeyHeader, idempotencyKeyOf } from '@meridian/platform-http';
import { accountKeyRoute, ROUTE_ERRORS, forbiddenAlso } from '../http/route-errors';
import { ApiRoute } from '@meridian/platform-http/openapi';

@Controller('api/v1/top-ups')
@UseGuards(AccountKeyGuard)
export class TopUpsController {
  constructor(private readonly accounts: AccountsService) {}

  @Post()
  @ApiRoute({
    summary:
      'Buy CU (recorded as bought, with the key and who bought it; pending until it clears). ' +
      'Header Idempotency-Key',
    body: accountTopUpBody,
    headers: { 'Idempotency-Key': idempotencyKeyHeader },
    responses: accountKeyRoute({
      201: { description: 'the pending top-up', schema: topUpResponse },
      400: ROUTE_ERRORS.topUpBody,
      403: forbiddenAlso({
        description:
          `${ROUTE_ERRORS.selfServiceDisabled.description}; ` +
          'created_by_not_allowed: created_by given by a key other than a managed (dashboard) one',
      }),
      409: ROUTE_ERRORS.idempotencyKeyReused,
    }),
  })
  @HttpCode(201)
  async create(
    @CallerKey() key: ApiKeyRow,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey?: string,
  ) {
    const { cu, created_by } = parseBody(accountTopUpBody, body);
    return topUpView(
      await this.accounts.topUp(
        key.accountId,
        cu,
        { source: 'account', key, ...(created_by === undefined ? {} : { createdBy: created_by }) },
        idempotencyKeyOf(idempotencyKey),
      ),
    );
  }

  @Get()
  @ApiRoute({
    summary: 'List top-ups',
    query: listQuery,
    responses: accountKeyRoute({
      200: { description: 'a page of top-ups', schema: topUpsPage },
      400: ROUTE_ERRORS.invalidQuery,
    }),
  })
  async list(@CallerKey() { accountId }: ApiKeyRow, @Query() query: unknown) {
    const { limit, cursor } = parseQuery(listQuery, query);
    return page(await this.accounts.listTopUps(accountId, limit + 1, cursor), limit, topUpView);
  }
}
