import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** chain-indexer's metrics, labelled by network (README "Metrics"). */
export class IndexerMetrics {
  readonly headLagBlocks: Gauge<'network'>;
  readonly headLagSeconds: Gauge<'network'>;
  readonly lastStepSuccess: Gauge<'network'>;
  readonly nodeHead: Gauge<'network'>;
  readonly cursor: Gauge<'network'>;
  readonly nodeBehind: Gauge<'network'>;
  readonly published: Counter<'network' | 'mode'>;
  readonly reorgs: Counter<'network'>;
  readonly reorgDepth: Histogram<'network'>;
  readonly deepReorgs: Counter<'network'>;
  readonly halted: Gauge<'network'>;
  readonly backfillRemaining: Gauge<'network'>;
  readonly leader: Gauge<'network'>;
  readonly wsConnected: Gauge<'network'>;
  readonly receiptsFallback: Counter<'network'>;
  readonly errors: Counter<'network' | 'code'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.headLagBlocks = new Gauge({
      name: 'chain_indexer_head_lag_blocks',
      help: "Blocks between the node's head and the last block published",
      labelNames: ['network'],
      registers,
    });
    this.headLagSeconds = new Gauge({
      name: 'chain_indexer_head_lag_seconds',
      help: 'Seconds between now and the timestamp of the last block published',
      labelNames: ['network'],
      registers,
    });
    this.lastStepSuccess = new Gauge({
      name: 'chain_indexer_last_step_success_timestamp_seconds',
      help:
        'Unix time of the last follower step that worked while leading (a block published, a ' +
        'reorg handled or the head found unchanged), or of taking the lead; frozen while the ' +
        'node, Postgres or NATS fails or hangs',
      labelNames: ['network'],
      registers,
    });
    this.nodeHead = new Gauge({
      name: 'chain_indexer_node_head',
      help: "The node's latest block number",
      labelNames: ['network'],
      registers,
    });
    this.cursor = new Gauge({
      name: 'chain_indexer_cursor',
      help: 'Number of the last block published (the persisted cursor)',
      labelNames: ['network'],
      registers,
    });
    this.nodeBehind = new Gauge({
      name: 'chain_indexer_node_behind_blocks',
      help: "Blocks the node's head is below the cursor (0 when it is not behind)",
      labelNames: ['network'],
      registers,
    });
    this.published = new Counter({
      name: 'chain_indexer_blocks_published_total',
      help: 'Canonical blocks published (mode: live at the head, backfill catching up a gap)',
      labelNames: ['network', 'mode'],
      registers,
    });
    this.reorgs = new Counter({
      name: 'chain_indexer_reorgs_total',
      help: 'Reorganisations handled (one removal message each)',
      labelNames: ['network'],
      registers,
    });
    this.reorgDepth = new Histogram({
      name: 'chain_indexer_reorg_depth_blocks',
      help: 'Blocks removed per reorganisation',
      labelNames: ['network'],
      buckets: [1, 2, 3, 5, 10, 20, 50, 96, 128],
      registers,
    });
    this.deepReorgs = new Counter({
      name: 'chain_indexer_deep_reorgs_total',
      help: 'Reorganisations deeper than the block window (alert: README "Deep reorgs")',
      labelNames: ['network'],
      registers,
    });
    this.halted = new Gauge({
      name: 'chain_indexer_halted',
      help: '1 while a network is halted (a deep reorganisation, or a block that cannot be published)',
      labelNames: ['network'],
      registers,
    });
    this.backfillRemaining = new Gauge({
      name: 'chain_indexer_backfill_remaining_blocks',
      help: 'Blocks left to publish while catching up a gap (0 at the head)',
      labelNames: ['network'],
      registers,
    });
    this.leader = new Gauge({
      name: 'chain_indexer_leader',
      help: '1 while this replica holds the network lease and publishes it',
      labelNames: ['network'],
      registers,
    });
    this.wsConnected = new Gauge({
      name: 'chain_indexer_ws_connected',
      help: '1 while the newHeads WebSocket is up (0: polling)',
      labelNames: ['network'],
      registers,
    });
    this.receiptsFallback = new Counter({
      name: 'chain_indexer_receipts_fallback_total',
      help: 'Nodes found without eth_getBlockReceipts (receipts fetched per transaction)',
      labelNames: ['network'],
      registers,
    });
    this.errors = new Counter({
      name: 'chain_indexer_errors_total',
      help: 'Failed follower steps (retried; a non-retryable one halts the network on its block)',
      labelNames: ['network', 'code'],
      registers,
    });
  }
}
