import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import {
  idempotencyKeyHeader,
  idempotencyKeyOf,
  INVALID_IDEMPOTENCY_KEY,
} from '@meridian/platform-http';
import { alreadyCreated } from './already-created';
import { AccountId, AccountKeyGuard, CallerKey } from '../http/auth.guards';
import type { ApiKeyRow } from './credentials.repository';
import { IdParam } from '../http/ids';
import { createApiKeyBody, listQuery } from '../http/schemas';
import { parseBody, parseQuery } from '../http/validation';
import { apiKeyView, page } from '../http/views';
import { CredentialsService } from './credentials.service';
import { apiKeysPage, createdApiKeyResponse } from '../http/response.schemas';
import { ApiRoute } from '@meridian/platform-http/openapi';
import { ID_SCHEMAS } from '../ids';
import { accountKeyRoute, ROUTE_ERRORS, forbiddenAlso } from '../http/route-errors';

@Controller('api/v1/api-keys')
@UseGuards(AccountKeyGuard)
export class ApiKeysController {
  constructor(private readonly credentials: CredentialsService) {}

  @Post()
  @ApiRoute({
    summary:
      'Create an API key (shown once) with scopes the calling key holds itself. Header ' +
      'Idempotency-Key: a repeat makes no second key and answers 409 already_created with the ' +
      'id of the first',
    body: createApiKeyBody,
    headers: { 'Idempotency-Key': idempotencyKeyHeader },
    responses: accountKeyRoute({
      201: { description: 'the key, with its secret', schema: createdApiKeyResponse },
      400: {
        description: `malformed_body: the body does not fit (an unknown field); ${INVALID_IDEMPOTENCY_KEY}`,
      },
      403: forbiddenAlso({
        description:
          "scope_not_held: a scope asked for is not one of the calling key's own (missing: those, " +
          "held: the calling key's, beside error); " +
          'created_by_not_allowed: created_by given by a key other than a managed (dashboard) one',
      }),
      409: {
        description:
          'already_created: this Idempotency-Key already made a key with this request ' +
          '(id, credential: its view without the secret, active), its secret shown once and ' +
          'not again: delete it and make a new one with a new Idempotency-Key; ' +
          ROUTE_ERRORS.idempotencyKeyReused.description,
      },
    }),
  })
  @HttpCode(201)
  async create(
    @CallerKey() maker: ApiKeyRow,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey?: string,
  ) {
    const { name, scopes, created_by } = parseBody(createApiKeyBody, body);
    const created = await this.credentials.createApiKeyWithKey(
      maker,
      { name, scopes, ...(created_by === undefined ? {} : { createdBy: created_by }) },
      idempotencyKeyOf(idempotencyKey),
    );
    if ('earlier' in created)
      throw alreadyCreated(
        'API key',
        apiKeyView(created.earlier),
        created.earlier.revokedAt === null,
        created.earlier.revokedAt === null
          ? `delete it (DELETE /api/v1/api-keys/${created.earlier.id}) and make a new one with a new Idempotency-Key`
          : 'make a new one with a new Idempotency-Key',
      );
    return apiKeyView(created.row, created.secret);
  }

  @Get()
  @ApiRoute({
    summary: 'List API keys (no secrets; keys managed by the operator are not listed)',
    query: listQuery,
    responses: accountKeyRoute({
      200: { description: 'a page of keys', schema: apiKeysPage },
      400: ROUTE_ERRORS.invalidQuery,
    }),
  })
  async list(@AccountId() accountId: string, @Query() query: unknown) {
    const { limit, cursor } = parseQuery(listQuery, query);
    return page(await this.credentials.listApiKeys(accountId, limit + 1, cursor), limit, (row) =>
      apiKeyView(row),
    );
  }

  @Delete(':id')
  @ApiRoute({
    params: { id: ID_SCHEMAS.key },
    summary: 'Delete an API key',
    responses: accountKeyRoute({
      204: { description: 'deleted' },
      403: forbiddenAlso({
        description: 'managed_key: the key is managed by the operator (the dashboard)',
      }),
      404: { description: 'not_found: no active key of the account with this id' },
    }),
  })
  @HttpCode(204)
  async revoke(@AccountId() accountId: string, @IdParam('key') id: string): Promise<void> {
    await this.credentials.revokeApiKey(accountId, id, 'account');
  }
}
