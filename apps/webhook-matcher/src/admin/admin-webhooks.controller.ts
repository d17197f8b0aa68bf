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
import { DeliveriesController } from '../deliveries/deliveries.controller';
import { DeliveriesRepository } from '../deliveries/deliveries.repository';
import { deliveriesPage, deliveriesQuery } from '../deliveries/deliveries.schemas';
import { ReplayService } from '../deliveries/replay.service';
import { webhookIdParams } from '../http/ids';
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
 * The operator's read of one account's webhooks and their delivery logs (the dashboard's operator
 * page, support's "my webhook didn't fire"): the same list, view and log the account's own key
 * gets, read-only. An account with no webhooks, or one this service never heard of, has an empty
 * list (accounts live in billing-ledger).
 */
@Controller('api/v1/admin/accounts')
@UseGuards(OperatorGuard)
export class AdminWebhooksController {
  /**
   * The customer's own handler of `GET /webhooks/{id}/deliveries`, called for the account: one
   * home for the log's filters, cursor and refusals (the operator reads exactly what the
   * customer reads). Only its read is reached from here; nothing routes to its replays.
   */
  private readonly customerLog: Pick<DeliveriesController, 'list'>;

  constructor(
    private readonly webhooks: WebhooksService,
    private readonly recordStats: RecordStatsRepository,
    private readonly recordUsage: RecordUsageRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    deliveries: DeliveriesRepository,
    replays: ReplayService,
  ) {
    this.customerLog = new DeliveriesController(webhooks, deliveries, replays);
  }

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

  @Get(':id/webhooks/:webhookId/deliveries')
  @ApiRoute({
    summary:
      "One account webhook's delivery log, read-only (as GET /webhooks/{id}/deliveries: the " +
      'same filters, cursor and refusals)',
    auth: 'operator',
    params: { id: accountIdSchema, webhookId: webhookIdParams.id },
    query: deliveriesQuery,
    responses: {
      200: {
        description: 'a page of the log, each row with its event summary',
        schema: deliveriesPage,
      },
      400: ROUTE_ERRORS.deliveries[400],
      401: ROUTE_ERRORS.adminWebhooks[401],
      404: {
        ...ROUTE_ERRORS.adminWebhooks[404],
        description:
          'not_found: the account id is not acc_ and 24 hex, or the account has no webhook ' +
          "with this id (another account's included)",
      },
    },
  })
  async deliveries(
    @Param('id', accountIdPipe) accountId: string,
    @Param('webhookId') webhookId: string,
    @Query() query: unknown,
  ) {
    return this.customerLog.list(accountId, webhookId, query);
  }
}
