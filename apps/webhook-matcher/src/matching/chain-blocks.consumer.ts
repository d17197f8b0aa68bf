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

/** What the poller needs of the app's DbJobGate. */
export interface ChangePollGate {
  readonly open: boolean;
  outage(error: unknown): Promise<boolean>;
}

export interface ChangePollLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * Follows the change feed every CHANGE_POLL_MS while no block arrives. Serialised with block
 * handling by the caller's lock, so the index never changes in the middle of a block.
 *
 * While Postgres is out of reach (the gate closed, or a poll's failure it calls an outage) the
 * polls skip quietly: the gate logs the outage once when it starts and once when it ends (QA:
 * 2,106 lines with a stack each in a 9-minute outage). Any other failure is logged once, without
 * its stack, until a poll succeeds again or it fails another way.
 */
export class ChangePoller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private failing: string | undefined;

  constructor(
    private readonly engine: MatchingEngine,
    private readonly gate: ChangePollGate,
    private readonly log: ChangePollLog,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      this.running = this.running.then(() => this.poll());
    }, CHANGE_POLL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One poll; never rejects. */
  async poll(): Promise<void> {
    if (!this.gate.open) return;
    try {
      await this.engine.syncChanges();
      if (this.failing !== undefined) this.log.info({}, 'change feed poll works again');
      this.failing = undefined;
    } catch (error) {
      if (await this.gate.outage(error).catch(() => false)) return;
      const message = error instanceof Error ? error.message : String(error);
      if (message === this.failing) return;
      this.failing = message;
      this.log.warn({ err: message }, 'change feed poll failed; retrying every poll');
    }
  }
}
