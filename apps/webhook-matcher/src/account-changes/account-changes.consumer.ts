import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Consumers, Events, type BalanceStateChanged } from '@meridian/contracts';
import { isEvent, JetStreamConsumers, type ConsumedMessage } from '@meridian/platform-messaging';
import {
  CREDENTIAL_SOURCE,
  type AccountFacts,
  type CredentialSource,
} from '../auth/credential-source';
import { StatusService } from '../status/status.service';

/** Facts of billing's balance event (the event carries plan, caps and balance together). */
export function factsOfBalanceEvent(e: BalanceStateChanged): AccountFacts {
  const w = e.caps.webhooks;
  return {
    accountId: e.accountId,
    planId: e.planId,
    accountType: e.accountType,
    nodeOwner: e.nodeOwner,
    caps: {
      activeWebhooks: w.activeWebhooks,
      addressesPerWebhook: w.addressesPerWebhook,
      addressesPerAccount: w.addressesPerAccount,
      eventsPerSecond: w.eventsPerSecond,
      eventsBurst: w.eventsBurst,
      inlineAddresses: w.inlineAddresses,
      listRefs: w.listRefs,
      addressLists: w.addressLists,
      addressesPerList: w.addressesPerList,
    },
    exhausted: e.state === 'exhausted',
    exhaustedSince: e.exhaustedSince === null ? null : new Date(e.exhaustedSince),
    allowanceCu: e.allowanceCu,
    purchasedCu: e.purchasedCu,
    pendingTopUpCu: e.pendingTopUpCu,
    version: e.version,
  };
}

/**
 * billing-ledger's plan and balance events → webhook statuses. A plan event applies the plan
 * (downgrade pauses what no longer fits as paused_plan, upgrade resumes paused_plan newest
 * first) with the account's state read fresh from billing; a balance event stores the balance
 * facts (the no-balance decision and resumes read them) and re-applies the plan when its caps
 * differ from what this app held. Nothing here resumes paused_no_balance (spec).
 */
@Injectable()
export class AccountChangesConsumer implements OnApplicationBootstrap {
  constructor(
    private readonly consumers: JetStreamConsumers,
    private readonly status: StatusService,
    @Inject(CREDENTIAL_SOURCE) private readonly credentials: CredentialSource,
  ) {}

  onApplicationBootstrap(): void {
    this.consumers.run(Consumers.matcherAccountChanges, (message) => this.handle(message));
  }

  async handle(message: ConsumedMessage): Promise<void> {
    if (isEvent(message, Events.planChanged)) {
      await this.status.applyPlan(await this.credentials.accountFacts(message.payload.accountId));
      return;
    }
    if (isEvent(message, Events.balanceStateChanged)) {
      const facts = factsOfBalanceEvent(message.payload);
      const { planChanged } = await this.status.recordBalance(facts);
      if (planChanged) await this.status.applyPlan(facts);
    }
  }
}
