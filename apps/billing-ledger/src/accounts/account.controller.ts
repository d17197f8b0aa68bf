import { Body, Controller, Get, Inject, Put, Query, UseGuards } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import type { Clock } from '@meridian/time';
import { DAY } from '@meridian/time';
import { CLOCK } from '../clock/clock.token';
import { AccountId, AccountKeyGuard } from '../http/auth.guards';
import { accountPlanBody, usageQuery } from '../http/schemas';
import { parseBody, parseQuery } from '../http/validation';
import { accountView, balanceView } from '../http/views';
import { AccountsService } from './accounts.service';
import { ApiRoute } from '@meridian/platform-http/openapi';

const MAX_USAGE_RANGE_MS = 366 * DAY;

@Controller('api/v1/account')
@UseGuards(AccountKeyGuard)
export class AccountController {
  constructor(
    private readonly accounts: AccountsService,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Get()
  @ApiRoute({ summary: 'The account: plan, caps and balance' })
  async get(@AccountId() accountId: string) {
    const [row, pending] = await Promise.all([
      this.accounts.get(accountId),
      this.accounts.pendingTopUps(accountId),
    ]);
    return accountView(row, pending, this.clock.now());
  }

  @Get('balance')
  @ApiRoute({ summary: 'CU balance: allowance, purchased, pending top-ups, next reset' })
  async balance(@AccountId() accountId: string) {
    const [row, pending] = await Promise.all([
      this.accounts.get(accountId),
      this.accounts.pendingTopUps(accountId),
    ]);
    return balanceView(row, pending, this.clock.now());
  }

  @Get('usage')
  @ApiRoute({
    summary: 'Usage by day, network or method (webhook deliveries as network webhooks)',
    query: usageQuery,
  })
  async usage(@AccountId() accountId: string, @Query() query: unknown) {
    const q = parseQuery(usageQuery, query);
    const to = q.to ? new Date(q.to) : this.clock.now();
    const from = q.from ? new Date(q.from) : new Date(to.getTime() - 30 * DAY);
    if (from.getTime() >= to.getTime() || to.getTime() - from.getTime() > MAX_USAGE_RANGE_MS) {
      throw new DomainError(
        'invalid_query',
        'invalid',
        'from must be before to, at most 366 days apart',
      );
    }
    const items = await this.accounts.usage(accountId, from, to, q.group_by);
    return {
      from: from.toISOString(),
      to: to.toISOString(),
      group_by: q.group_by,
      items,
      total_cu: items.reduce((sum, line) => sum + line.cu, 0),
      total_calls: items.reduce((sum, line) => sum + line.calls, 0),
    };
  }

  @Put('plan')
  @ApiRoute({ summary: 'Change the plan (enterprise: operator only)', body: accountPlanBody })
  async setPlan(@AccountId() accountId: string, @Body() body: unknown) {
    const { plan } = parseBody(accountPlanBody, body);
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
    return accountView(row, await this.accounts.pendingTopUps(accountId), this.clock.now());
  }
}
