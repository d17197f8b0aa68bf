import { Body, Controller, Get, Inject, Put, Query, UseGuards } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import type { Clock } from '@meridian/time';
import { CLOCK } from '../clock/clock.token';
import { AccountId, AccountKeyGuard, RequiresScope } from '../http/auth.guards';
import { accountPlanBody, usageQuery } from '../http/schemas';
import { parseBody, parseQuery } from '../http/validation';
import { accountView, balanceView } from '../http/views';
import { AccountsService } from './accounts.service';
import { accountResponse, balanceResponse, usageResponse } from '../http/response.schemas';
import { ApiRoute } from '@meridian/platform-http/openapi';
import { accountKeyRoute, ROUTE_ERRORS, forbiddenAlso } from '../http/route-errors';

@Controller('api/v1/account')
@UseGuards(AccountKeyGuard)
export class AccountController {
  constructor(
    private readonly accounts: AccountsService,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Get()
  @ApiRoute({
    summary: 'The account: plan, caps and balance',
    responses: accountKeyRoute({
      200: { description: 'the account', schema: accountResponse },
    }),
  })
  async get(@AccountId() accountId: string) {
    const [row, pending] = await Promise.all([
      this.accounts.get(accountId),
      this.accounts.pendingTopUps(accountId),
    ]);
    return accountView(row, pending, this.clock.now(), this.accounts.selfServiceBilling);
  }

  @Get('balance')
  @ApiRoute({
    summary: 'CU balance: allowance, purchased, pending top-ups, next reset',
    responses: accountKeyRoute({
      200: { description: 'the balance', schema: balanceResponse },
    }),
  })
  async balance(@AccountId() accountId: string) {
    const [row, pending] = await Promise.all([
      this.accounts.get(accountId),
      this.accounts.pendingTopUps(accountId),
    ]);
    return balanceView(row, pending, this.clock.now());
  }

  @Get('usage')
  @ApiRoute({
    summary:
      'Usage by day, network, method or day and network (webhook deliveries as network webhooks)',
    query: usageQuery,
    responses: accountKeyRoute({
      200: { description: 'usage of the whole hours in [from, to)', schema: usageResponse },
      400: ROUTE_ERRORS.usageQuery,
      503: ROUTE_ERRORS.usageUnavailable,
    }),
  })
  async usage(@AccountId() accountId: string, @Query() query: unknown) {
    return this.accounts.usageReport(accountId, parseQuery(usageQuery, query));
  }

  @Put('plan')
  @RequiresScope('plan')
  @ApiRoute({
    summary:
      'Change the plan: the key needs the plan scope beside account (403 self_service_disabled ' +
      'unless SELF_SERVICE_BILLING; enterprise: operator only)',
    body: accountPlanBody,
    responses: accountKeyRoute({
      200: { description: 'the account', schema: accountResponse },
      400: ROUTE_ERRORS.malformedBody,
      403: forbiddenAlso(ROUTE_ERRORS.planForbidden, ROUTE_ERRORS.planScope),
    }),
  })
  async setPlan(@AccountId() accountId: string, @Body() body: unknown) {
    const { plan } = parseBody(accountPlanBody, body);
    this.accounts.requireSelfService();
    if (plan === 'enterprise') {
      throw new DomainError(
        'contract_required',
        'forbidden',
        'the enterprise plan is set by the operator with a contract',
      );
    }
    const current = await this.accounts.get(accountId);
    const row = await this.accounts.setPlan(
      accountId,
      plan,
      plan === current.planId ? current.contract : null,
    );
    return accountView(
      row,
      await this.accounts.pendingTopUps(accountId),
      this.clock.now(),
      this.accounts.selfServiceBilling,
    );
  }
}
