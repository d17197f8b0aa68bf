import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import { accountAddresses, activeWebhookCount } from '@meridian/plans';
import { DataSource } from 'typeorm';
import { AccountId, ApiKeyGuard } from '../auth/api-key.guard';
import { CREDENTIAL_SOURCE, type CredentialSource } from '../auth/credential-source';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { AddressListsRepository } from '../address-lists/address-lists.repository';
import { planRequiredOf } from '../status/status.service';
import { servedWebhookNetworks } from '../webhooks/networks';
import { WebhooksRepository } from '../webhooks/webhooks.repository';
import { limitsResponse } from './limits.schemas';
import { ApiRoute } from '@meridian/platform-http/openapi';
import { ROUTE_ERRORS } from '../http/route-errors';

/**
 * GET /webhooks/limits: the account's caps (as billing resolved them), what it uses, and the
 * networks a webhook may watch here.
 */
@Controller('api/v1/webhooks')
@UseGuards(ApiKeyGuard)
export class LimitsController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly webhooks: WebhooksRepository,
    private readonly lists: AddressListsRepository,
    @Inject(CREDENTIAL_SOURCE) private readonly credentials: CredentialSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('limits')
  @ApiRoute({
    summary: 'The plan caps and the account usage that counts against them',
    responses: {
      200: { description: 'caps and usage', schema: limitsResponse },
      ...ROUTE_ERRORS.limits,
    },
  })
  async limits(@AccountId() accountId: string) {
    const facts = await this.credentials.accountFacts(accountId);
    const m = this.dataSource.manager;
    const counted = await this.webhooks.counted(m, accountId);
    const sizes = await this.lists.sizes(m, accountId);
    const c = facts.caps;
    return {
      tier: facts.planId,
      account_type: facts.accountType,
      plan_required: planRequiredOf(facts),
      node_owner: facts.nodeOwner,
      caps: {
        active_webhooks: c.activeWebhooks,
        addresses_per_webhook: c.addressesPerWebhook,
        inline_addresses: c.inlineAddresses,
        list_refs: c.listRefs,
        addresses_per_list: c.addressesPerList,
        address_lists: c.addressLists,
        addresses_per_account: c.addressesPerAccount,
        events_per_second: c.eventsPerSecond,
        events_burst: c.eventsBurst,
      },
      usage: {
        account_addresses: accountAddresses(counted, sizes),
        webhooks: activeWebhookCount(counted),
        // What caps.active_webhooks counts: every non-deleted webhook, paused ones included
        // (spec plan limits rule 1), the count a create's or a resume's refusal names; those in
        // status active are webhooks_status_active.
        active_webhooks: activeWebhookCount(counted),
        webhooks_status_active: counted.filter((w) => w.status === 'active').length,
        address_lists: sizes.size,
      },
      networks: servedWebhookNetworks(this.config.NETWORKS),
    };
  }
}
