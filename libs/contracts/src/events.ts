import { defineEvent } from './event-contract';
import { ChainBlockSchema, ChainBlocksRemovedSchema } from './events/chain.events';
import {
  BalanceStateChangedSchema,
  CredentialRevokedSchema,
  PlanChangedSchema,
  TopUpClearedSchema,
  UsageFlushedSchema,
  UsageFlushedV2Schema,
  UsageRecordedSchema,
} from './events/billing.events';
import { DeliveryHealthSchema, DeliveryJobSchema } from './events/webhook.events';
import { deliveryRouteToken, ledgerPartitionToken, Subjects } from './subjects';

/** Every event type of the system. Publish with `publisher.publish(Events.x, payload)`. */
export const Events = {
  chainBlock: defineEvent({
    type: 'chain.block.canonical.v1',
    stream: 'CHAIN',
    schema: ChainBlockSchema,
    family: Subjects.chain.block,
    tokenOf: (p) => p.network,
  }),
  chainBlocksRemoved: defineEvent({
    type: 'chain.block.removed.v1',
    stream: 'CHAIN',
    schema: ChainBlocksRemovedSchema,
    family: Subjects.chain.removed,
    tokenOf: (p) => p.network,
  }),
  deliveryJob: defineEvent({
    type: 'webhook.delivery.requested.v1',
    stream: 'WEBHOOK',
    schema: DeliveryJobSchema,
    family: Subjects.webhook.deliveryJob,
    tokenOf: (p) => deliveryRouteToken(p.route),
  }),
  deliveryHealth: defineEvent({
    type: 'webhook.delivery.attempted.v1',
    stream: 'WEBHOOK',
    schema: DeliveryHealthSchema,
    family: Subjects.webhook.deliveryHealth,
    tokenOf: (p) => p.accountId,
  }),
  usageRecorded: defineEvent({
    type: 'billing.usage.recorded.v1',
    stream: 'BILLING',
    schema: UsageRecordedSchema,
    family: Subjects.billing.usage,
    tokenOf: (p) => p.accountId,
  }),
  usageFlushed: defineEvent({
    type: 'billing.usage.flushed.v1',
    stream: 'BILLING',
    schema: UsageFlushedSchema,
    family: Subjects.billing.usageFlushed,
    tokenOf: (p) => p.producerId,
    // ~2,000 accounts a part, ~40 parts a second at a fleet's shape: zod's copy of every account
    // was a seventh of billing-ledger's CPU (ADR 0104).
    compiledCheck: true,
  }),
  /** The compact part (ADR 0105): ~43 bytes an account-item where v1 takes ~157. */
  usageFlushedV2: defineEvent({
    type: 'billing.usage.flushed.v2',
    stream: 'BILLING',
    schema: UsageFlushedV2Schema,
    family: Subjects.billing.usageFlushedV2,
    tokenOf: (p) => ledgerPartitionToken(p.ledgerPartition ?? 0),
    compiledCheck: true,
  }),
  /**
   * An account's facts changed: created, plan, pending top-ups, or its ok/exhausted state
   * flipped. A usage charge that flips nothing is not announced (one a second per busy account
   * at a fleet's shape); every state, CU included, is in the balance-state KV bucket.
   */
  balanceStateChanged: defineEvent({
    type: 'billing.balance.changed.v1',
    stream: 'BILLING',
    schema: BalanceStateChangedSchema,
    family: Subjects.billing.balanceChanged,
    tokenOf: (p) => p.accountId,
  }),
  planChanged: defineEvent({
    type: 'billing.plan.changed.v1',
    stream: 'BILLING',
    schema: PlanChangedSchema,
    family: Subjects.billing.planChanged,
    tokenOf: (p) => p.accountId,
  }),
  credentialRevoked: defineEvent({
    type: 'billing.credential.revoked.v1',
    stream: 'BILLING',
    schema: CredentialRevokedSchema,
    family: Subjects.billing.credentialRevoked,
    tokenOf: (p) => p.accountId,
  }),
  topUpCleared: defineEvent({
    type: 'billing.topup.cleared.v1',
    stream: 'BILLING',
    schema: TopUpClearedSchema,
    family: Subjects.billing.topUpCleared,
    tokenOf: (p) => p.accountId,
  }),
} as const;

export const allEvents = Object.values(Events);

/**
 * Which event type an unprefixed subject belongs to, for consumers whose filter spans several
 * types (e.g. blocks and removals): `eventForSubject('chain.block.removed.v1.eth-mainnet')`.
 */
export function eventForSubject(subject: string) {
  return allEvents.find(
    (event) =>
      subject.startsWith(`${event.type}.`) &&
      subject.split('.').length === event.type.split('.').length + 1,
  );
}
