import {
  chainRemovedId,
  Events,
  type ChainBlocksRemoved,
  type EventContract,
  type PayloadOf,
} from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import type { DbJobGate } from '@meridian/platform-db';
import { loggableError } from '@meridian/platform-observability';
import { fullBucket, take, type Bucket, type BucketLimit } from '@meridian/rate-limits';
import type { Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { blockParts } from '../blocks/block-parts';
import type { NodeClient, RawBlock } from '../chain/node-client';
import {
  LeaseFencedError,
  type ChainState,
  type ChainStateRepository,
  type WindowBlock,
} from '../cursors/chain-state.repository';
import type { NetworkLease } from '../leases/network-lease';
import type { IndexerMetrics } from '../metrics/indexer-metrics';
import { findCommonAncestor } from '../reorg/common-ancestor';
import type { HeadWatcher } from './head-watcher';

export type Publish = <C extends EventContract>(
  contract: C,
  payload: PayloadOf<C>,
) => Promise<unknown>;

export interface FollowerOptions {
  windowBlocks: number;
  /**
   * Block hashes kept per network (≥ windowBlocks; README "Deep reorgs"): under `resync`, a
   * reorg deeper than the window finds its common ancestor in them and lists their orphaned
   * blocks in the removal, so no block of the new branch is skipped.
   */
  historyBlocks: number;
  maxMessageBytes: number;
  backfillBlocksPerSecond: number;
  startBlocksBehind: number;
  deepReorgPolicy: 'halt' | 'resync';
  /** Wait between attempts while another replica leads, and the longest idle wait. */
  leaseCheckMs: number;
  /** Wait after a failed step before the next. */
  errorBackoffMs: number;
}

export interface FollowerDeps {
  network: string;
  node: NodeClient;
  watcher: HeadWatcher;
  lease: NetworkLease;
  repository: ChainStateRepository;
  publish: Publish;
  clock: Clock;
  metrics: IndexerMetrics;
  logger: Logger;
  options: FollowerOptions;
  /**
   * Settles once NATS is first connected (NatsClient.connection()): leading needs it (the lease
   * is a KV entry), so no step is tried before, and a normal start, whose connection comes up in
   * the background, logs no "NATS is not connected" failure.
   */
  natsConnected?: Promise<unknown>;
  /**
   * Settles once Postgres is first connected (DbJobGate.whenOpen()): a step reads the cursor, so
   * none is tried before, and a wrong DATABASE_URL logs its cause once (the connect log), not an
   * "indexer step failed: Driver not Connected" at each poll.
   */
  databaseConnected?: Promise<unknown>;
  /**
   * The app's DbJobGate: a step failing because Postgres is out of reach is reported to it (its
   * one line, not an "indexer step failed" per poll) and the loop waits until it answers.
   */
  database?: Pick<DbJobGate, 'failed' | 'whenOpen'>;
}

type StepResult = 'progressed' | 'idle';

/**
 * Follows one network while this replica holds its lease: publishes each new block (parts,
 * then the cursor: publish-then-advance, README "Ordering"), detects a reorg by parent hash and
 * publishes one removal before the new branch, catches up a gap at a bounded rate.
 */
export class NetworkFollower {
  private state: ChainState | undefined;
  private fence: number | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private sleeper: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  private readonly backfillLimit: BucketLimit;
  private backfillBucket: Bucket | undefined;
  private deepReorgOpen = false;
  /** The node's head is below the window, under `halt`: warned once until it is back. */
  private behindOpen = false;
  /** The block a step is publishing: where a non-retryable error halts the network. */
  private publishing: { number: number; hash: string } | undefined;
  /**
   * A block that failed with a non-retryable error (README "Blocks on the stream"): not tried
   * again (no receipts fetched, no error counted) while the node's block at its height is it.
   */
  private stuck: { number: number; hash: string; code: string } | undefined;
  /** Settles when stop() is called: ends the wait for NATS. */
  private readonly stopRequested: Promise<void>;
  private requestStop!: () => void;

  constructor(private readonly deps: FollowerDeps) {
    const rate = deps.options.backfillBlocksPerSecond;
    this.backfillLimit = { ratePerSecond: rate, burst: Math.max(1, Math.ceil(rate)) };
    this.stopRequested = new Promise((resolve) => (this.requestStop = resolve));
  }

  get network(): string {
    return this.deps.network;
  }

  start(): void {
    this.deps.watcher.start();
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.requestStop();
    this.deps.watcher.stop();
    if (this.sleeper) {
      clearTimeout(this.sleeper.timer);
      this.sleeper.resolve();
    }
    await this.loop;
    await this.deps.lease.release().catch(() => undefined);
    this.deps.metrics.leader.set({ network: this.network }, 0);
  }

  private async run(): Promise<void> {
    const { logger, metrics, options } = this.deps;
    if (this.deps.natsConnected) await Promise.race([this.deps.natsConnected, this.stopRequested]);
    if (this.deps.databaseConnected)
      await Promise.race([this.deps.databaseConnected, this.stopRequested]);
    while (!this.stopped) {
      try {
        const fence = await this.leadership();
        if (fence === undefined) {
          await this.sleep(options.leaseCheckMs);
          continue;
        }
        const result = await this.step(fence);
        this.markStepSuccess();
        if (result === 'idle') await this.deps.watcher.wait(options.leaseCheckMs);
      } catch (error) {
        if (error instanceof LeaseFencedError) this.lose('fenced');
        if (this.deps.database && (await this.deps.database.failed(error))) {
          metrics.errors.inc({ network: this.network, code: 'database_unavailable' });
          await Promise.race([this.deps.database.whenOpen(), this.stopRequested]);
          continue;
        }
        const code = error instanceof DomainError ? error.code : 'internal';
        metrics.errors.inc({ network: this.network, code });
        if (error instanceof DomainError && !error.retryable && this.publishing) {
          this.haltOn(this.publishing, error);
          await this.sleep(options.errorBackoffMs);
          continue;
        }
        logger.warn(
          {
            network: this.network,
            code,
            err: error instanceof Error ? error.message : String(error),
            // "no node answered" says nothing without the node's own error (QA: an answer over
            // viem's size limit read as a dead node for ever); URLs reduced to their origin.
            cause: error instanceof Error && error.cause ? loggableError(error.cause) : undefined,
          },
          'indexer step failed; retrying',
        );
        await this.sleep(options.errorBackoffMs);
      }
    }
  }

  /** Acquires or renews the lease when due; on a new fence claims the cursor and loads state. */
  private async leadership(): Promise<number | undefined> {
    const { lease, repository, clock } = this.deps;
    let fence = lease.token();
    if (fence === undefined || lease.renewDue()) {
      try {
        fence = await lease.tick();
      } catch (error) {
        // NATS unreachable: keep leading until the lease runs out on our clock, then stop.
        fence = lease.token();
        if (fence === undefined) throw error;
      }
    }
    if (fence === undefined) {
      if (this.fence !== undefined) this.lose('lease lost');
      return undefined;
    }
    if (fence !== this.fence) {
      await repository.claim(this.network, fence, clock.now());
      this.state = await repository.load(this.network, this.deps.options.windowBlocks);
      this.fence = fence;
      this.deps.metrics.leader.set({ network: this.network }, 1);
      // A new leader's stall is counted from its takeover, not from a step it made long ago.
      this.markStepSuccess();
      this.deps.logger.info(
        { network: this.network, fence, cursor: this.state.head?.number },
        'leading network',
      );
    }
    return fence;
  }

  private lose(reason: string): void {
    if (this.fence !== undefined)
      this.deps.logger.warn({ network: this.network, reason }, 'no longer leading network');
    this.fence = undefined;
    this.state = undefined;
    this.deps.metrics.leader.set({ network: this.network }, 0);
  }

  /** One unit of work: publish one block, handle one reorg, or find nothing to do. */
  private async step(fence: number): Promise<StepResult> {
    const { node, metrics, options } = this.deps;
    const state = this.state!;
    this.publishing = undefined;
    const head = await node.blockNumber();
    metrics.nodeHead.set({ network: this.network }, head);

    if (!state.head) {
      const start = Math.max(0, head - options.startBlocksBehind);
      if (this.stuck && (await this.stillStuck(start))) return 'idle';
      const block = await this.fetch(start);
      if (!block) return 'idle';
      await this.publishBlock(block, fence, head);
      return 'progressed';
    }
    const cursor = state.head;
    metrics.nodeBehind.set({ network: this.network }, Math.max(0, cursor.number - head));
    if (head <= cursor.number) {
      // Nothing new, or the node is behind us: check it still agrees with what we published.
      const ours = state.window.get(head);
      if (!ours && head < cursor.number) return this.behindTheWindow(head, cursor, fence);
      this.endBehindEpisode(head, cursor);
      const theirs = await node.blockByNumber(head, false);
      if (ours && theirs && theirs.hash.toLowerCase() !== ours.hash.toLowerCase())
        return this.reorganise(theirs, fence, head);
      this.reportLag(head, cursor);
      return 'idle';
    }
    this.endBehindEpisode(head, cursor);
    if (this.stuck && (await this.stillStuck(cursor.number + 1))) {
      this.reportLag(head, cursor);
      return 'idle';
    }
    if (head - cursor.number > 1) {
      // Catching up a gap: bounded, so a long outage does not flood the node or the stream.
      const nowMs = this.deps.clock.now().getTime();
      this.backfillBucket ??= fullBucket(this.backfillLimit, nowMs);
      const taken = take(this.backfillBucket, 1, this.backfillLimit, nowMs);
      if (!taken.ok) {
        await this.sleep(taken.retryAfterMs);
        return 'progressed';
      }
    }
    const block = await this.fetch(cursor.number + 1);
    if (!block) return 'idle';
    if (block.parentHash.toLowerCase() !== cursor.hash.toLowerCase())
      return this.reorganise(block, fence, head);
    await this.publishBlock(block, fence, head);
    return 'progressed';
  }

  /**
   * The node's head is below our window: its hashes cannot tell a lagging node (restarted,
   * catching up, a failover to one behind) from another chain (a devnet reset, a deep reorg).
   * `resync` trusts the node: the deep-reorg path. `halt` waits without halting (a lagging node
   * must not stop the network) and shows it: `chain_indexer_node_behind_blocks`, one warning
   * per episode (README "A node behind the cursor").
   */
  private async behindTheWindow(
    head: number,
    cursor: WindowBlock,
    fence: number,
  ): Promise<StepResult> {
    const { node, logger, options, repository } = this.deps;
    let lagging = options.deepReorgPolicy === 'halt';
    if (!lagging) {
      const theirs = await node.blockByNumber(head, false);
      // The history still holds our block at the node's head: the same hash is a lagging node
      // on our chain (wait, as under `halt`), not a reorg.
      const ours = theirs && (await repository.blockAt(this.network, head));
      lagging = !!ours && ours.hash.toLowerCase() === theirs.hash.toLowerCase();
      if (theirs && !lagging) return this.reorganise(theirs, fence, head);
    }
    if (lagging && !this.behindOpen) {
      this.behindOpen = true;
      const oldest = Math.min(...this.state!.window.keys());
      logger.warn(
        {
          network: this.network,
          policy: options.deepReorgPolicy,
          nodeHead: head,
          cursor: cursor.number,
          behind: cursor.number - head,
          windowFrom: oldest,
        },
        'node head below the block window: waiting for the node to pass the cursor',
      );
    }
    this.reportLag(head, cursor);
    return 'idle';
  }

  private endBehindEpisode(head: number, cursor: WindowBlock): void {
    if (!this.behindOpen) return;
    this.behindOpen = false;
    this.deps.logger.info(
      { network: this.network, nodeHead: head, cursor: cursor.number },
      'node head back within the block window',
    );
  }

  private async fetch(number: number): Promise<RawBlock | undefined> {
    return this.deps.node.blockByNumber(number, true);
  }

  private async publishBlock(block: RawBlock, fence: number, head: number): Promise<void> {
    // Read by run()'s catch, so cleared only when the block is published (and at each step).
    this.publishing = { number: Number(block.number), hash: block.hash };
    await this.publishBlockParts(block, fence, head);
    this.publishing = undefined;
  }

  /**
   * A non-retryable error on a block (one too large for the stream even after splitting and
   * omitting, a payload the contract refuses): trying again would fail the same way, so the
   * network halts on that block, as it does on a deep reorg: `chain_indexer_halted` = 1 and
   * one `error` line, rather than publish past it or re-fetch it every `POLL_INTERVAL_MS`.
   */
  private haltOn(block: { number: number; hash: string }, error: DomainError): void {
    this.stuck = { ...block, code: error.code };
    this.deps.metrics.halted.set({ network: this.network }, 1);
    this.deps.logger.error(
      {
        network: this.network,
        block,
        code: error.code,
        err: error.message,
        details: error.details,
      },
      'block cannot be published: network halted on it until the node replaces it or a restart',
    );
  }

  /** Halted on `stuck` while it is the node's next block; a reorg that replaces it resumes. */
  private async stillStuck(next: number): Promise<boolean> {
    const stuck = this.stuck!;
    if (stuck.number === next) {
      const theirs = await this.deps.node.blockByNumber(stuck.number, false);
      if (!theirs || theirs.hash.toLowerCase() === stuck.hash.toLowerCase()) return true;
    }
    this.stuck = undefined;
    if (!this.deepReorgOpen) this.deps.metrics.halted.set({ network: this.network }, 0);
    this.deps.logger.info(
      { network: this.network, block: { number: stuck.number, hash: stuck.hash } },
      'halted block is no longer the next block: resuming',
    );
    return false;
  }

  private async publishBlockParts(block: RawBlock, fence: number, head: number): Promise<void> {
    const { node, repository, clock, metrics, options } = this.deps;
    const receipts = await node.receiptsOf(block);
    const state = this.state!;
    const parts = blockParts(this.network, block, receipts, {
      maxMessageBytes: options.maxMessageBytes,
      generation: state.generation,
      publishedAt: clock.now().toISOString(),
    });
    for (const part of parts) await this.publish(Events.chainBlock, part, fence);
    const published: WindowBlock = {
      number: Number(block.number),
      hash: block.hash,
      parentHash: block.parentHash,
      timestamp: Number(block.timestamp),
    };
    // Only after every part is stored: a crash before this line republishes the same ids.
    await repository.advance(
      this.network,
      published,
      Math.max(options.historyBlocks, options.windowBlocks),
      fence,
      clock.now(),
    );
    state.window.set(published.number, published);
    for (const number of state.window.keys())
      if (number <= published.number - options.windowBlocks) state.window.delete(number);
    this.state = { head: published, generation: state.generation, window: state.window };
    const backfilling = head - published.number > 0;
    metrics.published.inc({ network: this.network, mode: backfilling ? 'backfill' : 'live' });
    this.reportLag(head, published);
  }

  /** `newBlock` does not extend what we published: remove the orphaned blocks, then rewind. */
  private async reorganise(newBlock: RawBlock, fence: number, head: number): Promise<StepResult> {
    const { node, repository, clock, metrics, logger, options } = this.deps;
    const state = this.state!;
    const newHead = { number: Number(newBlock.number), hash: newBlock.hash };
    const hashAt = async (n: number) => (await node.blockByNumber(n, false))?.hash;
    const search = await findCommonAncestor(state.window, newHead.number, hashAt);
    let ancestor: WindowBlock;
    let removed: WindowBlock[] = search.removed;
    let unlinked = false;
    if (search.kind === 'found') {
      if (search.removed.length === 0) return this.inconsistentNode(newBlock, head);
      ancestor = search.ancestor;
      this.deepReorgOpen = false;
      metrics.halted.set({ network: this.network }, 0);
    } else {
      if (!this.deepReorgOpen) {
        this.deepReorgOpen = true;
        metrics.deepReorgs.inc({ network: this.network });
      }
      const oldest = search.removed[search.removed.length - 1];
      logger.error(
        {
          network: this.network,
          policy: options.deepReorgPolicy,
          windowFrom: oldest?.number,
          windowTo: state.head?.number,
          newHead,
        },
        'reorg deeper than the block window: no block of the window is on the node chain',
      );
      if (options.deepReorgPolicy === 'halt' || !oldest || oldest.number === 0) {
        metrics.halted.set({ network: this.network }, 1);
        return 'idle';
      }
      // The documented recovery (README "Deep reorgs"): walk the node's chain down through the
      // history kept under the window to the real common ancestor, and remove every orphaned
      // block above it, so the new branch is published from its first block (QA MM F1: taking
      // the block under the window as the ancestor skipped the new branch's blocks below it).
      const older = new Map(
        (await repository.history(this.network, oldest.number)).map((b) => [b.number, b]),
      );
      const deeper = await findCommonAncestor(older, newHead.number, hashAt);
      removed = [...search.removed, ...deeper.removed];
      if (deeper.kind === 'found') {
        ancestor = deeper.ancestor;
        logger.warn(
          {
            network: this.network,
            ancestor: ancestor.number,
            depth: removed.length,
            historyFrom: Math.min(oldest.number, ...older.keys()),
          },
          'deep reorg: common ancestor found in the block history',
        );
      } else {
        // Deeper than the history too: no hash of ours to compare below it. Take the node's
        // block under the history (or, for a node whose head is below it, README "A node behind
        // the cursor", one window below its head); blocks of the new branch under that point,
        // if any, cannot be found and are not published (logged).
        const bottom = removed[removed.length - 1]!;
        const below = await node.blockByNumber(
          newHead.number < bottom.number
            ? Math.max(0, newHead.number - options.windowBlocks)
            : bottom.number - 1,
          false,
        );
        if (!below) return 'idle';
        ancestor = {
          number: Number(below.number),
          hash: below.hash,
          parentHash: below.parentHash,
          timestamp: Number(below.timestamp),
        };
        unlinked = true;
        logger.error(
          { network: this.network, historyFrom: bottom.number, from: ancestor.number, newHead },
          'reorg deeper than the block history: the node chain is published from its block ' +
            'under the history; blocks of the new branch below it are not published',
        );
      }
      this.deepReorgOpen = false;
      metrics.halted.set({ network: this.network }, 0);
    }
    const removal: ChainBlocksRemoved = {
      id: chainRemovedId(this.network, newHead.hash, state.generation),
      network: this.network,
      removed: removed.map((b) => ({ number: b.number, hash: b.hash })),
      commonAncestor: { number: ancestor.number, hash: ancestor.hash },
      newHead,
      detectedAt: clock.now().toISOString(),
    };
    await this.publish(Events.chainBlocksRemoved, removal, fence);
    await repository.rewind(
      this.network,
      ancestor,
      state.generation + 1,
      fence,
      clock.now(),
      unlinked,
    );
    this.state = await repository.load(this.network, options.windowBlocks);
    metrics.reorgs.inc({ network: this.network });
    metrics.reorgDepth.observe({ network: this.network }, removal.removed.length);
    logger.warn(
      { network: this.network, depth: removal.removed.length, ancestor: ancestor.number, newHead },
      'reorg: removal published',
    );
    return 'progressed';
  }

  /**
   * The node's block after the cursor names another parent, yet its block at the cursor is ours
   * (an inconsistent node, or a load-balanced pool answering from two forks): nothing to remove
   * and nothing to publish. A failed step (QA MM F3: it was an idle success, so the lag read 0
   * and the stall alert never fired while the head moved on): a warning with the heights and
   * hashes, the lag as it is, the next node for the next step, and no success mark.
   */
  private inconsistentNode(newBlock: RawBlock, head: number): never {
    const { node, logger } = this.deps;
    const cursor = this.state!.head!;
    this.reportLag(head, cursor);
    const next = node.failover();
    const details = {
      cursor: { number: cursor.number, hash: cursor.hash },
      next: {
        number: Number(newBlock.number),
        hash: newBlock.hash,
        parentHash: newBlock.parentHash,
      },
      nodeHead: head,
    };
    logger.warn(
      { network: this.network, ...details, nextUpstream: next },
      'node answers inconsistently: its block after the cursor does not extend its block at the ' +
        'cursor',
    );
    throw new DomainError(
      'node_inconsistent',
      'unavailable',
      `${this.network}: block ${details.next.number} (${details.next.hash}) names parent ` +
        `${details.next.parentHash}, but the node's block ${cursor.number} is ${cursor.hash}`,
      { details },
    );
  }

  private async publish<C extends EventContract>(
    contract: C,
    payload: PayloadOf<C>,
    fence: number,
  ) {
    // A replica whose lease ran out on its own clock must not publish another message.
    if (this.deps.lease.token() !== fence) throw new LeaseFencedError(this.network);
    await this.deps.publish(contract, payload);
  }

  /**
   * `chain_indexer_last_step_success_timestamp_seconds`: only a step that finished moves it, so
   * a node (or Postgres, NATS) that fails or hangs leaves it frozen and the leader's
   * `time() - …` grows (alert MeridianChainIndexerStalled; the lag gauges are only set by a
   * step that worked, README "Metrics").
   */
  private markStepSuccess(): void {
    this.deps.metrics.lastStepSuccess.set(
      { network: this.network },
      this.deps.clock.now().getTime() / 1000,
    );
  }

  private reportLag(head: number, cursor: WindowBlock): void {
    const { metrics, clock } = this.deps;
    // Lag stays ≥ 0 (blocks to publish); a node behind the cursor has its own gauge
    // (`nodeBehind`, set in `step`), so no alert has to read a sign.
    const behind = Math.max(0, head - cursor.number);
    metrics.cursor.set({ network: this.network }, cursor.number);
    metrics.headLagBlocks.set({ network: this.network }, behind);
    metrics.backfillRemaining.set({ network: this.network }, behind > 1 ? behind : 0);
    metrics.headLagSeconds.set(
      { network: this.network },
      Math.max(0, clock.now().getTime() / 1000 - cursor.timestamp),
    );
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      this.sleeper = {
        timer: setTimeout(() => {
          this.sleeper = undefined;
          resolve();
        }, ms),
        resolve,
      };
    });
  }
}
