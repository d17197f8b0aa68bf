import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { AccountId, ApiKeyGuard } from '../auth/api-key.guard';
import { checkEventId, checkId, eventIdSchema, webhookIdParams } from '../http/ids';
import { parseBody, parseQuery } from '../http/validation';
import { emptyBody } from '../webhooks/webhook.schemas';
import { WebhooksService } from '../webhooks/webhooks.service';
import { DeliveriesRepository } from './deliveries.repository';
import {
  deliveriesPage,
  deliveriesQuery,
  deliveryStats,
  replayRangeBody,
  replayResponse,
} from './deliveries.schemas';
import { attemptView, statsView } from './deliveries.view';
import { ReplayService } from './replay.service';
import { ApiRoute } from '@meridian/platform-http/openapi';
import { ROUTE_ERRORS } from '../http/route-errors';
import { DomainError } from '@meridian/errors';
import { refusedAt } from '@meridian/webhooks';

/** The attempt log, stats and replay of one webhook (someone else's id answers 404). */
@Controller('api/v1/webhooks')
@UseGuards(ApiKeyGuard)
export class DeliveriesController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly deliveries: DeliveriesRepository,
    private readonly replays: ReplayService,
  ) {}

  @Get(':id/deliveries')
  @ApiRoute({
    summary:
      'The delivery log, newest first, of the last DELIVERY_LOG_RETENTION_DAYS (30 by default): ' +
      'failed attempts and events dropped by the events per second (rate_limited); with ' +
      'event_id, tx_hash or block_number every outcome of those events, successes included; ' +
      'outcome, since and until narrow it',
    params: webhookIdParams,
    query: deliveriesQuery,
    responses: {
      200: {
        description: 'a page of the log, each row with its event summary',
        schema: deliveriesPage,
      },
      ...ROUTE_ERRORS.deliveries,
    },
  })
  async list(@AccountId() accountId: string, @Param('id') id: string, @Query() query: unknown) {
    const q = parseQuery(deliveriesQuery, query);
    if (q.since && q.until && q.since > q.until)
      throw new DomainError('invalid_query', 'invalid', 'query: since is after until', {
        details: refusedAt('query.since'),
      });
    const row = await this.webhooks.get(accountId, checkId('wh', id));
    const filter = {
      eventId: q.event_id,
      txHash: q.tx_hash,
      blockNumber: q.block_number,
      outcomes: q.outcome,
      since: q.since,
      until: q.until,
    };
    const page = await this.deliveries.attemptsPage(row.id, filter, q.limit, q.cursor);
    return { items: page.items.map(attemptView), next_cursor: page.nextCursor };
  }

  @Get(':id/stats')
  @ApiRoute({
    summary: 'delivered_total, failed_total, rate_limited_total, last_delivered_at',
    params: webhookIdParams,
    responses: {
      200: { description: 'the counters', schema: deliveryStats },
      ...ROUTE_ERRORS.webhookById,
    },
  })
  async stats(@AccountId() accountId: string, @Param('id') id: string) {
    const row = await this.webhooks.get(accountId, checkId('wh', id));
    const { stats, rateLimited } = await this.deliveries.stats(row.id);
    return statsView(stats, rateLimited);
  }

  @Post(':id/deliveries/:eventId/replay')
  @ApiRoute({
    summary:
      'Replay one failed or given-up event (billed like any attempt). Takes no body (an empty ' +
      'JSON object is accepted)',
    params: { ...webhookIdParams, eventId: eventIdSchema },
    noBody: true,
    responses: {
      202: { description: 'the jobs sent out again', schema: replayResponse },
      ...ROUTE_ERRORS.replayOne,
    },
  })
  @HttpCode(202)
  async replayOne(
    @AccountId() accountId: string,
    @Param('id') id: string,
    @Param('eventId') eventId: string,
    @Body() body: unknown,
  ) {
    parseBody(emptyBody.optional(), body);
    // The webhook first: someone else's answers 404 whatever the event id (README "Event ids").
    const row = await this.webhooks.get(accountId, checkId('wh', id));
    return this.replays.replay(accountId, row.id, { eventId: checkEventId(eventId) });
  }

  @Post(':id/replay')
  @ApiRoute({
    summary: 'Replay failed or given-up events in a time or block range',
    params: webhookIdParams,
    body: replayRangeBody,
    responses: {
      202: { description: 'the jobs sent out again', schema: replayResponse },
      ...ROUTE_ERRORS.replayRange,
    },
  })
  @HttpCode(202)
  async replayRange(
    @AccountId() accountId: string,
    @Param('id') id: string,
    @Body() body: unknown,
  ) {
    return this.replays.replay(accountId, checkId('wh', id), parseBody(replayRangeBody, body));
  }
}
