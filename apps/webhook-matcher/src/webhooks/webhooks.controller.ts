import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import { AccountId, ApiKeyGuard } from '../auth/api-key.guard';
import { checkId } from '../http/ids';
import { parseBody, parseQuery } from '../http/validation';
import { StatusService } from '../status/status.service';
import {
  createWebhookBody,
  emptyBody,
  idempotencyKey,
  pageQuery,
  patchWebhookBody,
  rotateSecretBody,
} from './webhook.schemas';
import { webhookView } from './webhook.view';
import { WebhooksService } from './webhooks.service';

@Controller('api/v1/webhooks')
@UseGuards(ApiKeyGuard)
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly status: StatusService,
  ) {}

  @Post()
  @HttpCode(201)
  async create(
    @AccountId() accountId: string,
    @Body() body: unknown,
    @Headers('idempotency-key') key: string | undefined,
  ) {
    const parsedKey = key === undefined ? null : parseBody(idempotencyKey, key);
    const { row, secret } = await this.webhooks.create(
      accountId,
      parseBody(createWebhookBody, body),
      parsedKey,
    );
    return { ...webhookView(row), secret };
  }

  @Get()
  async list(@AccountId() accountId: string, @Query() query: unknown) {
    const { limit, cursor } = parseQuery(pageQuery, query);
    const page = await this.webhooks.page(accountId, limit, cursor);
    return { items: page.items.map(webhookView), next_cursor: page.nextCursor };
  }

  @Get(':id')
  async get(@AccountId() accountId: string, @Param('id') id: string) {
    return webhookView(await this.webhooks.get(accountId, checkId('wh', id)));
  }

  @Patch(':id')
  async patch(@AccountId() accountId: string, @Param('id') id: string, @Body() body: unknown) {
    const parsed = parseBody(patchWebhookBody, body);
    return webhookView(await this.webhooks.patch(accountId, checkId('wh', id), parsed));
  }

  @Delete(':id')
  async delete(@AccountId() accountId: string, @Param('id') id: string) {
    return webhookView(await this.status.ownerAction(accountId, checkId('wh', id), 'owner_delete'));
  }

  @Post(':id/pause')
  @HttpCode(200)
  async pause(@AccountId() accountId: string, @Param('id') id: string, @Body() body: unknown) {
    parseBody(emptyBody.optional(), body);
    return webhookView(await this.status.ownerAction(accountId, checkId('wh', id), 'owner_pause'));
  }

  @Post(':id/resume')
  @HttpCode(200)
  async resume(@AccountId() accountId: string, @Param('id') id: string, @Body() body: unknown) {
    parseBody(emptyBody.optional(), body);
    return webhookView(await this.status.ownerAction(accountId, checkId('wh', id), 'owner_resume'));
  }

  @Post(':id/secret/rotate')
  @HttpCode(200)
  async rotate(@AccountId() accountId: string, @Param('id') id: string, @Body() body: unknown) {
    const { expire_previous } = parseBody(rotateSecretBody, body ?? {});
    const { row, secret } = await this.webhooks.rotateSecret(
      accountId,
      checkId('wh', id),
      expire_previous,
    );
    return {
      ...webhookView(row),
      secret,
      previous_secret_expires_at: row.previous_secret_expires_at?.toISOString() ?? null,
    };
  }

  @Post(':id/test')
  @HttpCode(202)
  async test(@AccountId() accountId: string, @Param('id') id: string, @Body() body: unknown) {
    parseBody(emptyBody.optional(), body);
    const { eventId } = await this.webhooks.sendTest(accountId, checkId('wh', id));
    return { queued: true, event_id: eventId };
  }
}
