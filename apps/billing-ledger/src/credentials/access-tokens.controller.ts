import { Body, Controller, Delete, Get, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { AccountId, AccountKeyGuard } from '../http/auth.guards';
import { IdParam } from '../http/ids';
import { createAccessTokenBody, listQuery } from '../http/schemas';
import { parseBody, parseQuery } from '../http/validation';
import { accessTokenView, page } from '../http/views';
import { CredentialsService } from './credentials.service';

@Controller('api/v1/access-tokens')
@UseGuards(AccountKeyGuard)
export class AccessTokensController {
  constructor(private readonly credentials: CredentialsService) {}

  @Post()
  @HttpCode(201)
  async create(@AccountId() accountId: string, @Body() body: unknown) {
    const { network, name } = parseBody(createAccessTokenBody, body);
    const created = await this.credentials.createAccessToken(accountId, network, name ?? network);
    return accessTokenView(created.row, created.secret);
  }

  @Get()
  async list(@AccountId() accountId: string, @Query() query: unknown) {
    const { limit, cursor } = parseQuery(listQuery, query);
    return page(
      await this.credentials.listAccessTokens(accountId, limit + 1, cursor),
      limit,
      (row) => accessTokenView(row),
    );
  }

  @Post(':id/roll')
  @HttpCode(200)
  async roll(@AccountId() accountId: string, @IdParam('tok') id: string) {
    const created = await this.credentials.rollAccessToken(accountId, id);
    return accessTokenView(created.row, created.secret);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@AccountId() accountId: string, @IdParam('tok') id: string): Promise<void> {
    await this.credentials.deleteAccessToken(accountId, id);
  }
}
