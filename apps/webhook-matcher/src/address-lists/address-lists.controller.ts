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
  Put,
  Query,
  UseGuards,
} from '@nestjs/common';
import { AccountId, ApiKeyGuard } from '../auth/api-key.guard';
import { checkId, listIdParams } from '../http/ids';
import { parseBody, parseQuery } from '../http/validation';
import { pageQuery } from '../webhooks/webhook.schemas';
import { createListBody, entriesBody, entriesQuery, patchListBody } from './address-list.schemas';
import {
  addressListResponse,
  addressListsPage,
  entriesChangeResponse,
  entriesPage,
} from './address-list-response.schemas';
import { addressListView } from './address-list.view';
import { AddressListsService } from './address-lists.service';
import { ApiRoute } from '@meridian/platform-http/openapi';
import { idempotencyKeyHeader, idempotencyKeyOf } from '@meridian/platform-http';
import { ROUTE_ERRORS } from '../http/route-errors';

@Controller('api/v1/address-lists')
@UseGuards(ApiKeyGuard)
export class AddressListsController {
  constructor(private readonly lists: AddressListsService) {}

  @Post()
  @ApiRoute({
    summary: 'Create an address list. Header Idempotency-Key',
    body: createListBody,
    headers: { 'Idempotency-Key': idempotencyKeyHeader },
    responses: {
      201: { description: 'the list', schema: addressListResponse },
      ...ROUTE_ERRORS.createList,
    },
  })
  @HttpCode(201)
  async create(
    @AccountId() accountId: string,
    @Body() body: unknown,
    @Headers('idempotency-key') key: string | undefined,
  ) {
    const { name, addresses } = parseBody(createListBody, body);
    return addressListView(
      await this.lists.create(accountId, name, addresses ?? [], idempotencyKeyOf(key)),
    );
  }

  @Get()
  @ApiRoute({
    summary: 'List address lists',
    query: pageQuery,
    responses: {
      200: { description: 'a page of lists', schema: addressListsPage },
      ...ROUTE_ERRORS.listLists,
    },
  })
  async list(@AccountId() accountId: string, @Query() query: unknown) {
    const { limit, cursor } = parseQuery(pageQuery, query);
    const page = await this.lists.page(accountId, limit, cursor);
    return { items: page.items.map(addressListView), next_cursor: page.nextCursor };
  }

  @Get(':id')
  @ApiRoute({
    summary: 'One address list',
    params: listIdParams,
    responses: {
      200: { description: 'the list', schema: addressListResponse },
      ...ROUTE_ERRORS.listById,
    },
  })
  async get(@AccountId() accountId: string, @Param('id') id: string) {
    return addressListView(await this.lists.get(accountId, checkId('al', id)));
  }

  @Patch(':id')
  @ApiRoute({
    summary: 'Rename a list',
    params: listIdParams,
    body: patchListBody,
    responses: {
      200: { description: 'the list', schema: addressListResponse },
      ...ROUTE_ERRORS.renameList,
    },
  })
  async rename(@AccountId() accountId: string, @Param('id') id: string, @Body() body: unknown) {
    const { name } = parseBody(patchListBody, body);
    return addressListView(await this.lists.rename(accountId, checkId('al', id), name));
  }

  @Delete(':id')
  @ApiRoute({
    summary: 'Delete a list (409 list_in_use while a webhook references it)',
    params: listIdParams,
    responses: { 204: { description: 'deleted' }, ...ROUTE_ERRORS.deleteList },
  })
  @HttpCode(204)
  async delete(@AccountId() accountId: string, @Param('id') id: string): Promise<void> {
    await this.lists.delete(accountId, checkId('al', id));
  }

  @Get(':id/entries')
  @ApiRoute({
    summary: 'Read entries, in address order (all, or those starting with ?prefix=)',
    params: listIdParams,
    query: entriesQuery,
    responses: {
      200: { description: 'a page of addresses', schema: entriesPage },
      ...ROUTE_ERRORS.listEntries,
    },
  })
  async entries(@AccountId() accountId: string, @Param('id') id: string, @Query() query: unknown) {
    const { limit, cursor, prefix } = parseQuery(entriesQuery, query);
    const page = await this.lists.entries(accountId, checkId('al', id), limit, cursor, prefix);
    return { items: page.items, next_cursor: page.nextCursor };
  }

  @Post(':id/entries')
  @ApiRoute({
    summary: 'Add entries (duplicates ignored)',
    params: listIdParams,
    body: entriesBody,
    responses: {
      200: { description: 'the list, added and removed', schema: entriesChangeResponse },
      ...ROUTE_ERRORS.changeEntries,
    },
  })
  @HttpCode(200)
  async add(@AccountId() accountId: string, @Param('id') id: string, @Body() body: unknown) {
    return this.change(accountId, id, 'add', body);
  }

  @Put(':id/entries')
  @ApiRoute({
    summary: 'Replace all entries',
    params: listIdParams,
    body: entriesBody,
    responses: {
      200: { description: 'the list, added and removed', schema: entriesChangeResponse },
      ...ROUTE_ERRORS.changeEntries,
    },
  })
  async replace(@AccountId() accountId: string, @Param('id') id: string, @Body() body: unknown) {
    return this.change(accountId, id, 'replace', body);
  }

  @Post(':id/entries/remove')
  @ApiRoute({
    summary: 'Remove entries',
    params: listIdParams,
    body: entriesBody,
    responses: {
      200: { description: 'the list, added (0) and removed', schema: entriesChangeResponse },
      ...ROUTE_ERRORS.removeEntries,
    },
  })
  @HttpCode(200)
  async remove(@AccountId() accountId: string, @Param('id') id: string, @Body() body: unknown) {
    return this.change(accountId, id, 'remove', body);
  }

  private async change(
    accountId: string,
    id: string,
    mode: 'add' | 'replace' | 'remove',
    body: unknown,
  ) {
    const listId = checkId('al', id);
    const { addresses } = parseBody(entriesBody, body);
    const { list, added, removed } = await this.lists.changeEntries(
      accountId,
      listId,
      mode,
      addresses,
    );
    return { ...addressListView(list), added, removed };
  }
}
