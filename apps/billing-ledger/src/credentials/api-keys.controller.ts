import { Body, Controller, Delete, Get, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { AccountId, AccountKeyGuard } from '../http/auth.guards';
import { IdParam } from '../http/ids';
import { createApiKeyBody, listQuery } from '../http/schemas';
import { parseBody, parseQuery } from '../http/validation';
import { apiKeyView, page } from '../http/views';
import { CredentialsService } from './credentials.service';
import { apiKeysPage, createdApiKeyResponse } from '../http/response.schemas';
import { ApiRoute } from '@meridian/platform-http/openapi';

@Controller('api/v1/api-keys')
@UseGuards(AccountKeyGuard)
export class ApiKeysController {
  constructor(private readonly credentials: CredentialsService) {}

  @Post()
  @ApiRoute({
    summary: 'Create an API key (shown once)',
    body: createApiKeyBody,
    responses: { 201: { description: 'the key, with its secret', schema: createdApiKeyResponse } },
  })
  @HttpCode(201)
  async create(@AccountId() accountId: string, @Body() body: unknown) {
    const { name, scopes } = parseBody(createApiKeyBody, body);
    const created = await this.credentials.createApiKey(accountId, { name, scopes });
    return apiKeyView(created.row, created.secret);
  }

  @Get()
  @ApiRoute({
    summary: 'List API keys (no secrets; keys managed by the operator are not listed)',
    query: listQuery,
    responses: { 200: { description: 'a page of keys', schema: apiKeysPage } },
  })
  async list(@AccountId() accountId: string, @Query() query: unknown) {
    const { limit, cursor } = parseQuery(listQuery, query);
    return page(await this.credentials.listApiKeys(accountId, limit + 1, cursor), limit, (row) =>
      apiKeyView(row),
    );
  }

  @Delete(':id')
  @ApiRoute({
    summary: 'Delete an API key',
    responses: {
      204: { description: 'deleted' },
      403: { description: 'managed_key: the key is managed by the operator (the dashboard)' },
      404: { description: 'not_found: no active key of the account with this id' },
    },
  })
  @HttpCode(204)
  async revoke(@AccountId() accountId: string, @IdParam('key') id: string): Promise<void> {
    await this.credentials.revokeApiKey(accountId, id, 'account');
  }
}
