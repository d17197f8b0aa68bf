import {
  Controller,
  Get,
  Inject,
  Param,
  Query,
  UseGuards,
  type PipeTransform,
} from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { ApiRoute } from '@meridian/platform-http/openapi';
import { z } from 'zod';
import { ROUTE_ERRORS } from '../http/route-errors';
import type { Clock } from '@meridian/time';
import { CLOCK } from '../common/clock.token';
import { parseQuery } from '../http/validation';
import { pageQuery } from '../webhooks/webhook.schemas';
import { webhooksPage } from '../webhooks/webhook-response.schemas';
import { RecordStatsRepository } from '../webhooks/record-stats.repository';
import { RecordUsageRepository } from '../webhooks/record-usage';
import { webhookViews } from '../webhooks/webhook.view';
import { WebhooksService } from '../webhooks/webhooks.service';
import { OperatorGuard } from './operator.guard';

/**
 * billing-ledger's account id (`acc_` + 24 hex). Anything else is 404 like an unknown account, as
 * billing-ledger's operator routes answer.
 */
const accountIdSchema = z
  .string()
  .regex(/^acc_[0-9a-f]{24}$/)
  .describe("billing-ledger's account id: acc_ and 24 hex (else 404 not_found)");

const accountIdPipe: PipeTransform<string, string> = {
  transform: (value) => {
    if (!accountIdSchema.safeParse(value).success)
      throw new DomainError('not_found', 'not_found', 'account not found');
    return value;
  },
};

/**
 * The operator's read of one account's webhooks (the dashboard's operator page): the same list
 * and view the account's own key gets. An account with no webhooks, or one this service never
 * heard of, has an empty list (accounts live in billing-ledger).
 */
@Controller('api/v1/admin/accounts')
@UseGuards(OperatorGuard)
export class AdminWebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly recordStats: RecordStatsRepository,
    private readonly recordUsage: RecordUsageRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Get(':id/webhooks')
  @ApiRoute({
    summary: 'One account webhooks, newest first (as GET /webhooks)',
    auth: 'operator',
    params: { id: accountIdSchema },
    query: pageQuery,
    responses: {
      200: { description: 'a page of webhooks', schema: webhooksPage },
      ...ROUTE_ERRORS.adminWebhooks,
    },
  })
  async list(@Param('id', accountIdPipe) accountId: string, @Query() query: unknown) {
    const { limit, cursor } = parseQuery(pageQuery, query);
    const page = await this.webhooks.page(accountId, limit, cursor);
    return {
      items: await webhookViews(
        page.items,
        { stats: this.recordStats, usage: this.recordUsage },
        this.clock.now(),
      ),
      next_cursor: page.nextCursor,
    };
  }
}
