import { Injectable } from '@nestjs/common';
import { addressesOfWebhook, type CountedWebhook, type ListSizes } from '@meridian/plans';
import { DataSource } from 'typeorm';
import { AddressListsRepository } from '../address-lists/address-lists.repository';
import type { WebhookUsage } from './webhook-response.schemas';
import { WebhooksRepository } from './webhooks.repository';

/**
 * A record's `usage`: what the webhook holds against the per-webhook caps, counted by the rules
 * the caps are checked with (@meridian/plans webhook-counting, rule 2 and the every-plan caps of
 * rule 5) on the webhook as `WebhooksRepository` counts it for `checkWebhookWrite` and
 * `planFitCounts`: so a create, a PATCH or a resume refused on one of these caps names the count
 * the record shows (ADR 0401 amendment). The page explaining a `paused_plan` webhook reads it
 * rather than counting the filter itself. Its members are described in the record's schema
 * (`webhookResponse`): addresses (caps.addresses_per_webhook), inline_addresses
 * (caps.inline_addresses), list_refs (caps.list_refs).
 */
export type RecordUsage = WebhookUsage;

export function recordUsageOf(webhook: CountedWebhook, lists: ListSizes): RecordUsage {
  return {
    addresses: addressesOfWebhook(webhook, lists),
    inline_addresses: webhook.inlineAddresses,
    list_refs: webhook.listRefs.length,
  };
}

/** The `usage` of a page of records: one count query, one list-size query per account. */
@Injectable()
export class RecordUsageRepository {
  constructor(
    private readonly db: DataSource,
    private readonly webhooks: WebhooksRepository,
    private readonly lists: AddressListsRepository,
  ) {}

  async of(webhookIds: readonly string[]): Promise<Map<string, RecordUsage>> {
    const m = this.db.manager;
    const counted = await this.webhooks.countedOf(m, webhookIds);
    const sizes = new Map<string, ListSizes>();
    for (const accountId of new Set(counted.map((w) => w.accountId)))
      sizes.set(accountId, await this.lists.sizes(m, accountId));
    return new Map(counted.map((w) => [w.id, recordUsageOf(w, sizes.get(w.accountId)!)]));
  }
}
