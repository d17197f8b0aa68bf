import { commonEnv, networkKeysSetting, upstreamsEnv } from '@meridian/platform-config';
import { reorgWindowBlocks } from '@meridian/networks';
import { z } from 'zod';

const int = (min: number) => z.coerce.number().int().min(min);

/** Every variable chain-indexer reads, validated at start; nothing else reads process.env. */
export const configSchema = z
  .object({
    ...commonEnv,
    /** Network keys to follow, comma separated (empty: none). Each needs UPSTREAMS entries. */
    NETWORKS: networkKeysSetting(),
    /** JSON object: network key → upstream node URLs (the parser shared with rpc-gateway). */
    UPSTREAMS: upstreamsEnv,
    /**
     * Recent block hashes kept per network: unset, each network's reorg window
     * (`REORG_WINDOW_BLOCKS` of @meridian/networks, 128; 256 on P), the one the gateway's cache
     * and the webhooks' confirm_depth are held to as well. A reorg within it is corrected block by
     * block; a deeper one is an alert (README "Deep reorgs"). Set, it replaces every network's:
     * above the largest confirm_depth (96) and never above the network's window (the gateway
     * caches what lies below that as final, so the indexer must not retract it).
     */
    WINDOW_BLOCKS: int(97).optional(),
    /**
     * Block hashes kept per network, the window included (README "Deep reorgs"): only number and
     * hashes. Under DEEP_REORG_POLICY=resync a reorg deeper than the window walks down through
     * them to its real common ancestor and lists their orphaned blocks in its removal. At most
     * 8192: one removal lists them all and must fit a stream message (~100 bytes a block).
     */
    HISTORY_BLOCKS: int(97).max(8192).default(2048),
    /** Poll for the head this often while the WebSocket is down (or never connected). */
    POLL_INTERVAL_MS: int(50).default(1_000),
    /** Poll this often even while the WebSocket delivers heads (a silent socket is caught). */
    SAFETY_POLL_MS: int(100).default(15_000),
    /** Wait before reconnecting a dropped WebSocket. */
    WS_RECONNECT_MS: int(50).default(2_000),
    /** Blocks per second published while catching up on a gap (after downtime). */
    BACKFILL_BLOCKS_PER_SECOND: z.coerce.number().positive().default(20),
    /** Leader lease: another replica takes a network over after this long without renewal. */
    LEASE_TTL_MS: int(1_000).default(15_000),
    /** A network first seen (no cursor) starts at the head minus this many blocks. */
    START_BLOCKS_BEHIND: int(0).default(0),
    /**
     * What a reorg deeper than the window does: `halt` (default: stop publishing the network,
     * alert, wait for the operator) or `resync` (the documented recovery: remove the whole
     * window and continue from the node's chain).
     */
    DEEP_REORG_POLICY: z.enum(['halt', 'resync']).default('halt'),
    /** This replica's name in the lease (default: host name and process id). */
    REPLICA_ID: z.string().default(''),
  })
  .superRefine((config, ctx) => {
    for (const network of config.NETWORKS) {
      if (config.WINDOW_BLOCKS !== undefined && config.WINDOW_BLOCKS > reorgWindowBlocks(network))
        ctx.addIssue({
          code: 'custom',
          path: ['WINDOW_BLOCKS'],
          message: `above the reorg window of "${network}" (${reorgWindowBlocks(network)} blocks)`,
        });
      if ((config.UPSTREAMS.get(network) ?? []).length === 0)
        ctx.addIssue({
          code: 'custom',
          path: ['UPSTREAMS'],
          message: `no upstream for network "${network}" (listed in NETWORKS)`,
        });
    }
  });

export type AppConfig = z.infer<typeof configSchema>;
