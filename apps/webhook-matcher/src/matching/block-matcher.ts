import type { ChainBlock } from '@meridian/contracts';
import { blockActivities, eventIdOf, type Activity, type EventKey } from '@meridian/webhooks';
import type { IndexedWebhook, MatchIndex } from './match-index';

export interface MatchedEvent {
  readonly webhook: IndexedWebhook;
  /** The id of the event's first occurrence (the engine moves on when that one was removed). */
  readonly eventId: string;
  readonly key: EventKey;
  readonly activity: Activity;
}

/**
 * Every (webhook, activity) pair of a block, in block order: a transaction and each of its logs
 * are separate activities (and events), so an ERC-20 transfer between two watched addresses
 * of one webhook is one event, and the transaction that carried it is another.
 */
export function matchBlock(index: MatchIndex, block: ChainBlock): MatchedEvent[] {
  const out: MatchedEvent[] = [];
  const webhooks: IndexedWebhook[] = [];
  for (const activity of blockActivities(block)) {
    index.matchInto(block.network, activity, webhooks);
    if (webhooks.length === 0) continue;
    const key: EventKey = {
      network: block.network,
      blockHash: block.hash,
      txHash: activity.txHash,
      logIndex: activity.logIndex,
    };
    const eventId = eventIdOf(key);
    for (const webhook of webhooks) out.push({ webhook, activity, key, eventId });
    webhooks.length = 0;
  }
  return out;
}
