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
import { AccountId, AccountKeyGuard } from '../http/auth.guards';
import { IdParam } from '../http/ids';
import { createAccessTokenBody, listQuery } from '../http/schemas';
import { parseBody, parseQuery } from '../http/validation';
import { accessTokenView, page } from '../http/views';
import { CredentialsService } from './credentials.service';
import { accessTokensPage, createdAccessTokenResponse } from '../http/response.schemas';
import { ApiRoute } from '@meridian/platform-http/openapi';
import { ID_SCHEMAS } from '../ids';
import { accountKeyRoute, ROUTE_ERRORS } from '../http/route-errors';

@Controller('api/v1/access-tokens')
@UseGuards(AccountKeyGuard)
export class AccessTokensController {
  constructor(private readonly credentials: CredentialsService) {}

  @Post()
  @ApiRoute({
    summary:
      'Create an access token for one network (shown once). Header Idempotency-Key: a repeat ' +
      'makes no second token and answers 409 already_created with the id of the first',
    body: createAccessTokenBody,
    headers: { 'Idempotency-Key': idempotencyKeyHeader },
    responses: accountKeyRoute({
      201: { description: 'the token, with its secret', schema: createdAccessTokenResponse },
      400: {
        description:
          'malformed_body: network is not a known network, or name is not 1 to 100 characters; ' +
          INVALID_IDEMPOTENCY_KEY,
      },
      409: {
        description:
          'cap_access_tokens_exceeded: the plan allows no more active tokens (limit, beside error); ' +
          'already_created: this Idempotency-Key already made a token with this request ' +
          '(id, credential: its view without the secret, active), its secret shown once and ' +
          'not again: roll it for a new secret; ' +
          ROUTE_ERRORS.idempotencyKeyReused.description,
      },
    }),
  })
  @HttpCode(201)
  async create(
    @AccountId() accountId: string,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey?: string,
  ) {
    const { network, name } = parseBody(createAccessTokenBody, body);
    const created = await this.credentials.createAccessToken(
      accountId,
      network,
      name ?? network,
      idempotencyKeyOf(idempotencyKey),
    );
    if ('earlier' in created)
      throw alreadyCreated(
        'access token',
        accessTokenView(created.earlier),
        created.earlier.revokedAt === null,
        created.earlier.revokedAt === null
          ? `roll it (POST /api/v1/access-tokens/${created.earlier.id}/roll) for a new secret`
          : 'make a new one with a new Idempotency-Key',
      );
    return accessTokenView(created.row, created.secret);
  }

  @Get()
  @ApiRoute({
    summary: 'List access tokens (no secrets)',
    query: listQuery,
    responses: accountKeyRoute({
      200: { description: 'a page of tokens', schema: accessTokensPage },
      400: ROUTE_ERRORS.invalidQuery,
    }),
  })
  async list(@AccountId() accountId: string, @Query() query: unknown) {
    const { limit, cursor } = parseQuery(listQuery, query);
    return page(
      await this.credentials.listAccessTokens(accountId, limit + 1, cursor),
      limit,
      (row) => accessTokenView(row),
    );
  }

  @Post(':id/roll')
  @ApiRoute({
    params: { id: ID_SCHEMAS.tok },
    summary: 'Roll: a new token for the same network; the old one dies at once',
    noBody: true,
    responses: accountKeyRoute({
      200: { description: 'the new token, with its secret', schema: createdAccessTokenResponse },
      404: ROUTE_ERRORS.tokenNotFound,
    }),
  })
  @HttpCode(200)
  async roll(@AccountId() accountId: string, @IdParam('tok') id: string) {
    const created = await this.credentials.rollAccessToken(accountId, id);
    return accessTokenView(created.row, created.secret);
  }

  @Delete(':id')
  @ApiRoute({
    summary: 'Delete an access token',
    params: { id: ID_SCHEMAS.tok },
    responses: accountKeyRoute({
      204: { description: 'deleted' },
      404: ROUTE_ERRORS.tokenNotFound,
    }),
  })
  @HttpCode(204)
  async remove(@AccountId() accountId: string, @IdParam('tok') id: string): Promise<void> {
    await this.credentials.deleteAccessToken(accountId, id);
  }
}
