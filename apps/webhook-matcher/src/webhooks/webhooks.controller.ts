import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Inject,
  Param,
  Patch,
  Post,
  Query,
  Res,
  UseGuards,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Clock } from '@meridian/time';
import { AccountId, ApiKeyGuard } from '../auth/api-key.guard';
import { CLOCK } from '../common/clock.token';
import { checkId, webhookIdParams } from '../http/ids';
import { etagHeader, etagOf, ifMatchHeader, parseIfMatch } from '../http/if-match';
import { parseBody, parseQuery } from '../http/validation';
import { StatusService } from '../status/status.service';
import { ROUTE_ERRORS } from '../http/route-errors';
import {
  createWebhookBody,
  createWebhookDocument,
  emptyBody,
  pageQuery,
  patchWebhookBody,
  patchWebhookDocument,
  rotateSecretBody,
} from './webhook.schemas';
import {
  createdWebhookResponse,
  rotatedWebhookResponse,
  testDeliveryResponse,
  webhookResponse,
  webhooksPage,
  type WebhookResponse,
} from './webhook-response.schemas';
import { RecordStatsRepository } from './record-stats.repository';
import { RecordUsageRepository } from './record-usage';
import { webhookViews, type RecordSources } from './webhook.view';
import type { WebhookRow } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';
import { idempotencyKeyHeader, idempotencyKeyOf } from '@meridian/platform-http';
import { ApiRoute } from '@meridian/platform-http/openapi';

@Controller('api/v1/webhooks')
@UseGuards(ApiKeyGuard)
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly status: StatusService,
    private readonly recordStats: RecordStatsRepository,
    private readonly recordUsage: RecordUsageRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  private get sources(): RecordSources {
    return { stats: this.recordStats, usage: this.recordUsage };
  }

  /**
   * The record with its `stats` members (spec "Webhook record") and its `usage`; the answer
   * carries its version as a strong ETag (`If-Match` of PATCH and DELETE names it; ADR 0404).
   */
  private async view(row: WebhookRow, reply: FastifyReply): Promise<WebhookResponse> {
    void reply.header('ETag', etagOf(row.version));
    return (await webhookViews([row], this.sources, this.clock.now()))[0]!;
  }

  @Post()
  @ApiRoute({
    summary: 'Create a webhook (201 with its whsec_ secret, shown once). Header Idempotency-Key',
    auth: 'api-key',
    body: createWebhookDocument,
    headers: { 'Idempotency-Key': idempotencyKeyHeader },
    responses: {
      201: {
        description: 'the webhook and its secret',
        schema: createdWebhookResponse,
        headers: { ETag: etagHeader },
      },
      ...ROUTE_ERRORS.createWebhook,
    },
  })
  @HttpCode(201)
  async create(
    @AccountId() accountId: string,
    @Body() body: unknown,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const { row, secret } = await this.webhooks.create(
      accountId,
      parseBody(createWebhookBody, body),
      idempotencyKeyOf(key),
    );
    return { ...(await this.view(row, reply)), secret };
  }

  @Get()
  @ApiRoute({
    summary: 'List webhooks, newest first',
    query: pageQuery,
    responses: {
      200: { description: 'a page of webhooks', schema: webhooksPage },
      ...ROUTE_ERRORS.listWebhooks,
    },
  })
  async list(@AccountId() accountId: string, @Query() query: unknown) {
    const { limit, cursor } = parseQuery(pageQuery, query);
    const page = await this.webhooks.page(accountId, limit, cursor);
    return {
      items: await webhookViews(page.items, this.sources, this.clock.now()),
      next_cursor: page.nextCursor,
    };
  }

  @Get(':id')
  @ApiRoute({
    params: webhookIdParams,
    summary: 'One webhook',
    responses: {
      200: { description: 'the webhook', schema: webhookResponse, headers: { ETag: etagHeader } },
      ...ROUTE_ERRORS.webhookById,
    },
  })
  async get(
    @AccountId() accountId: string,
    @Param('id') id: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return this.view(await this.webhooks.get(accountId, checkId('wh', id)), reply);
  }

  @Patch(':id')
  @ApiRoute({
    params: webhookIdParams,
    summary:
      'Change a webhook (chain, network and trigger type are immutable). Header If-Match: only ' +
      'if it is at that version',
    body: patchWebhookDocument,
    headers: { 'If-Match': ifMatchHeader },
    responses: {
      200: {
        description: 'the webhook as changed',
        schema: webhookResponse,
        headers: { ETag: etagHeader },
      },
      ...ROUTE_ERRORS.patchWebhook,
    },
  })
  async patch(
    @AccountId() accountId: string,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const parsed = parseBody(patchWebhookBody, body);
    const webhookId = checkId('wh', id);
    const condition = parseIfMatch(ifMatch);
    return this.view(await this.webhooks.patch(accountId, webhookId, parsed, condition), reply);
  }

  @Delete(':id')
  @ApiRoute({
    params: webhookIdParams,
    summary:
      'Delete a webhook (frees its slot); answers the webhook with status deleted. Header ' +
      'If-Match: only if it is at that version',
    headers: { 'If-Match': ifMatchHeader },
    responses: {
      200: {
        description: 'the webhook, status deleted',
        schema: webhookResponse,
        headers: { ETag: etagHeader },
      },
      ...ROUTE_ERRORS.deleteWebhook,
    },
  })
  async delete(
    @AccountId() accountId: string,
    @Param('id') id: string,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const webhookId = checkId('wh', id);
    const condition = parseIfMatch(ifMatch);
    return this.view(
      await this.status.ownerAction(accountId, webhookId, 'owner_delete', condition),
      reply,
    );
  }

  @Post(':id/pause')
  @ApiRoute({
    params: webhookIdParams,
    summary:
      'Pause (owner). Takes no body (an empty JSON object is accepted). Header If-Match: only ' +
      'if it is at that version',
    noBody: true,
    headers: { 'If-Match': ifMatchHeader },
    responses: {
      200: { description: 'the webhook', schema: webhookResponse, headers: { ETag: etagHeader } },
      ...ROUTE_ERRORS.ownerAction,
    },
  })
  @HttpCode(200)
  async pause(
    @AccountId() accountId: string,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    parseBody(emptyBody.optional(), body);
    const webhookId = checkId('wh', id);
    const condition = parseIfMatch(ifMatch);
    return this.view(
      await this.status.ownerAction(accountId, webhookId, 'owner_pause', condition),
      reply,
    );
  }

  @Post(':id/resume')
  @ApiRoute({
    params: webhookIdParams,
    summary:
      'Resume (409 insufficient_balance at zero balance; cap_* when over the plan). Takes no ' +
      'body (an empty JSON object is accepted). Header If-Match: only if it is at that version',
    noBody: true,
    headers: { 'If-Match': ifMatchHeader },
    responses: {
      200: { description: 'the webhook', schema: webhookResponse, headers: { ETag: etagHeader } },
      ...ROUTE_ERRORS.resume,
    },
  })
  @HttpCode(200)
  async resume(
    @AccountId() accountId: string,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    parseBody(emptyBody.optional(), body);
    const webhookId = checkId('wh', id);
    const condition = parseIfMatch(ifMatch);
    return this.view(
      await this.status.ownerAction(accountId, webhookId, 'owner_resume', condition),
      reply,
    );
  }

  @Post(':id/secret/rotate')
  @ApiRoute({
    params: webhookIdParams,
    summary:
      'Rotate the signing secret (the old one signs for 24 h unless expire_previous; at most 3 ' +
      'previous secrets sign at once, else 409 too_many_previous_secrets)',
    body: rotateSecretBody,
    // The body may be left out: the route reads `body ?? {}` (QA: declared required before).
    bodyOptional: true,
    responses: {
      200: {
        description: 'the webhook, its new secret and until when the previous ones sign',
        schema: rotatedWebhookResponse,
        headers: { ETag: etagHeader },
      },
      ...ROUTE_ERRORS.rotate,
    },
  })
  @HttpCode(200)
  async rotate(
    @AccountId() accountId: string,
    @Param('id') id: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const { expire_previous } = parseBody(rotateSecretBody, body ?? {});
    const { row, secret } = await this.webhooks.rotateSecret(
      accountId,
      checkId('wh', id),
      expire_previous,
    );
    const view = await this.view(row, reply);
    return {
      ...view,
      secret,
      previous_secret_expires_at: view.previous_secrets_expire_at[0] ?? null,
    };
  }

  @Post(':id/test')
  @ApiRoute({
    params: webhookIdParams,
    summary:
      'Queue a free test delivery (only while active; a few a minute per webhook and an hourly ' +
      'ceiling per account, else 429). Takes no body (an empty JSON object is accepted)',
    noBody: true,
    responses: {
      202: { description: 'queued', schema: testDeliveryResponse },
      ...ROUTE_ERRORS.testDelivery,
    },
  })
  @HttpCode(202)
  async test(@AccountId() accountId: string, @Param('id') id: string, @Body() body: unknown) {
    parseBody(emptyBody.optional(), body);
    const { eventId } = await this.webhooks.sendTest(accountId, checkId('wh', id));
    return { queued: true, event_id: eventId };
  }
}
