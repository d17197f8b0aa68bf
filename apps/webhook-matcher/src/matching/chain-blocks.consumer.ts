import {
  Consumers,
  Events,
  partitionedConsumer,
  type ConsumerDeclaration,
  type Partition,
} from '@meridian/contracts';
import { isEvent, type ConsumedMessage } from '@meridian/platform-messaging';
import type { MatchingEngine } from './matching.engine';

/** How often the index follows the change feed between blocks (a paused webhook stops in < 1 s). */
export const CHANGE_POLL_MS = 250;

/**
 * The ordered CHAIN consumer of one replica (ADR 0422). One replica: the declared durable. With
 * n replicas each has its own durable `<durable>-p<i>of<n>` over the whole stream (every
 * replica sees every block in order, and handles only its accounts); the provisioning command
 * creates them from MATCHER_PARTITIONS.
 */
export function chainBlocksConsumer(partition: Partition): ConsumerDeclaration {
  return partitionedConsumer(Consumers.matcherChainBlocks, partition);
}

/** Routes blocks and removals to the engine (the runner acks after the handler resolved). */
export function chainBlocksHandler(engine: MatchingEngine) {
  return async (message: ConsumedMessage): Promise<void> => {
    if (isEvent(message, Events.chainBlock)) await engine.handleBlock(message.payload);
    else if (isEvent(message, Events.chainBlocksRemoved))
      await engine.handleRemoved(message.payload);
  };
}

/**
 * Follows the change feed every CHANGE_POLL_MS while no block arrives. Serialised with block
 * handling by the caller's lock, so the index never changes in the middle of a block.
 */
export class ChangePoller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly engine: MatchingEngine,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      this.running = this.running.then(() => this.engine.syncChanges()).catch(this.onError);
    }, CHANGE_POLL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
