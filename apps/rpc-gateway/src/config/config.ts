import { usageFlushVersionSetting } from '@meridian/contracts';
import {
  certificateFile,
  commonEnv,
  grpcTargetSetting,
  port,
  privateKeyFile,
  secretSetting,
  upstreamsEnv,
  upstreamUrlListEnv,
} from '@meridian/platform-config';
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { DEFAULT_ACCOUNT_BUDGET } from '../websocket/account-budget';

const { DATABASE_URL: _none, ...withoutDatabase } = commonEnv;

const int = (min: number) => z.coerce.number().int().min(min);
const bool = z.enum(['true', 'false']).transform((value) => value === 'true');

/**
 * A Redis URL, `redis://` or `rediss://` (TLS) with a host, `[user:password@]` and `/<db>`
 * optional; empty = unset. Anything else is refused at start instead of falling back to
 * per-process limits with a warning that did not say why (QA M4). The value is never echoed:
 * it may hold a password.
 */
export const redisUrlSetting = z.string().refine(
  (value) => {
    if (value === '') return true;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return false;
    }
    return (
      (url.protocol === 'redis:' || url.protocol === 'rediss:') &&
      url.hostname !== '' &&
      /^(?:\/\d*)?$/.test(url.pathname)
    );
  },
  { message: 'must be a redis:// or rediss:// URL: redis[s]://[user:password@]host[:port][/db]' },
);

/** Every variable rpc-gateway reads, validated at start; nothing else reads process.env. */
const settings = z.object({
  ...withoutDatabase,
  /** Which endpoint this deployment serves: a region, or the shared endpoint of network S. */
  REGION: z.enum(['eu', 'us', 'asia', 'shared']),
  GRPC_PORT: port.default(9090),
  /** Set false to run without the BorApi gRPC server (e.g. the shared endpoint). */
  GRPC_ENABLED: bool.default(true),
  /**
   * TLS of the BorApi server itself (a certificate and its key; clients need none), for an edge
   * that passes gRPC through instead of terminating TLS. Unset: plaintext, TLS at the Ingress.
   * Not GRPC_TLS_*: those are this gateway's identity towards billing-ledger (ADR 0506).
   */
  PUBLIC_GRPC_TLS_CERT_FILE: certificateFile,
  PUBLIC_GRPC_TLS_KEY_FILE: privateKeyFile,
  /** billing-ledger's gRPC target, host:port (checked at start). */
  BILLING_GRPC_URL: grpcTargetSetting.default('127.0.0.1:9090'),
  /**
   * Dev/test only: JSON object token → {accountId, network, planId?, nodeRps?, status?}. When
   * set, tokens are resolved from it instead of billing-ledger (running the gateway alone).
   */
  STATIC_ACCESS_TOKENS: z.string().default(''),
  /**
   * Key of the seal that binds each filter id to the account, network and endpoint that made it
   * (at least 32 characters; ADR 0202). The same on every replica of an endpoint, so a filter
   * made on one is read on another. Required with NODE_ENV=production (the image sets it): a
   * fleet behind a load balancer would otherwise answer "filter not found" at random. Unset
   * elsewhere (the local stack, tests): a random key per replica (its workers share it), and a
   * filter works only on the replica that made it, until its restart.
   */
  FILTER_ID_KEY: secretSetting(z.string().min(32, 'must be at least 32 characters')).optional(),
  NODE_ENV: z.string().optional(),
  /**
   * JSON object: network key → array of upstream node URLs (or {http, ws} objects); parsed and
   * checked at start (the parser shared with chain-indexer).
   */
  UPSTREAMS: upstreamsEnv,
  /** Upstreams of network S, comma separated (ARCHITECTURE); each checked as a URL at start. */
  SUI_UPSTREAM_URLS: upstreamUrlListEnv,
  /** Upstream connections per node (undici pool size). */
  UPSTREAM_CONNECTIONS: int(1).default(128),
  UPSTREAM_TIMEOUT_MS: int(1).default(10_000),
  /** Attempts per call across nodes (retry-safe methods only). */
  UPSTREAM_MAX_ATTEMPTS: int(1).default(3),
  /**
   * Most calls per upstream batch when calls of one event-loop turn are sent together
   * (ADR 0205); 1 sends every client request in its own exchange.
   */
  UPSTREAM_BATCH_MAX: int(1).default(20),
  HEALTH_INTERVAL_MS: int(50).default(2_000),
  HEALTH_TIMEOUT_MS: int(50).default(1_500),
  /**
   * How far behind the best node of its pool a node may be and still take calls when no node
   * at the best height can (ADR 0202 amendment, "Heights"): this long at the network's block
   * (S: checkpoint) time, at least one block. 10 s: R 10 blocks, P 5, E 1, S 40 checkpoints.
   */
  MAX_LAG_MS: int(0).default(10_000),
  /** Set: this many blocks on every network instead of MAX_LAG_MS (the setting before it). */
  MAX_LAG_BLOCKS: int(0).optional(),
  /**
   * A node's breaker (ADR 0202 amendment, "Breaker"): this many failed attempts in a row (a
   * timeout, a reset, a bad answer, the node throttled, a failed health check) take it out of
   * rotation for the cooldown, doubling with each failed trial up to the max.
   */
  UPSTREAM_BREAKER_FAILURES: int(1).default(3),
  UPSTREAM_BREAKER_COOLDOWN_MS: int(1).default(5_000),
  UPSTREAM_BREAKER_MAX_COOLDOWN_MS: int(1).default(60_000),
  /**
   * Gone: what is final is each network's reorg window (`finalizedHeight` of @meridian/networks,
   * README "Caching"), the one chain-indexer and the webhooks are held to. Refused rather than
   * ignored, so a deployment that set it learns its number no longer applies.
   */
  FINALITY_DEPTH_BLOCKS: z
    .undefined({
      error: 'no longer read: each network\'s reorg window is final (README "Caching")',
    })
    .optional(),
  CACHE_MAX_ENTRIES: int(0).default(50_000),
  MAX_BATCH: int(1).default(100),
  MAX_LOGS_BLOCK_RANGE: int(1).default(10_000),
  /**
   * The node answers of one request (HTTP or WebSocket, a batch whole; a gRPC method) add up to
   * at most this many bytes, and a node's body is read no further: past it -32005, unbilled
   * (ADR 0215). 1 MiB to 256 MiB (V8 cannot make a string of much more than 512 MiB).
   */
  MAX_RESPONSE_BYTES: int(1024 * 1024)
    .max(256 * 1024 * 1024)
    .default(32 * 1024 * 1024),
  /**
   * The bytes of node answers a worker holds at once (ADR 0215 amendment): bodies being read
   * and answers kept until their request's answer is built, each answer counted once it passes
   * 1 MiB (smaller ones are never refused). An answer that would pass it is -32005 "server
   * busy", unbilled. Default 64 MiB: two answers at MAX_RESPONSE_BYTES per worker, ~110 MiB of
   * RSS each (ADR 0215), so both workers stay within the pod's headroom over ADR 0206's worst
   * case. At least MAX_RESPONSE_BYTES (checked below), at most 1 GiB.
   */
  MAX_ANSWER_BYTES_IN_FLIGHT: int(1024 * 1024)
    .max(1024 * 1024 * 1024)
    .default(64 * 1024 * 1024),
  CREDENTIAL_TTL_MS: int(1).default(600_000),
  CREDENTIAL_NEGATIVE_TTL_MS: int(0).default(5_000),
  /**
   * How long past CREDENTIAL_TTL_MS a token resolved before is still served while billing-ledger
   * cannot be asked (stale-if-error; a region cut from the core). 0 = never (ADR 0213).
   */
  CREDENTIAL_STALE_IF_ERROR_MS: int(0).default(21_600_000),
  USAGE_FLUSH_MS: int(10).default(1_000),
  /** Usage flush contract published: 2 (compact), or 1 during an upgrade (ADR 0105). */
  USAGE_FLUSH_VERSION: usageFlushVersionSetting,
  /**
   * Redis holding the plan-RPS buckets shared by every replica and region (ADR 0102); empty =
   * one bucket per replica (ADR 0204).
   */
  RATE_LIMIT_REDIS_URL: redisUrlSetting.default(''),
  /**
   * A `rediss://` RATE_LIMIT_REDIS_URL whose certificate a private CA signed: that CA (PEM).
   * Unset: the system's CAs. A client certificate and its key when Redis verifies clients
   * (`tls-auth-clients`). Checked at start; read again at each connection (ADR 0506).
   */
  RATE_LIMIT_REDIS_TLS_CA_FILE: certificateFile,
  RATE_LIMIT_REDIS_TLS_CERT_FILE: certificateFile,
  RATE_LIMIT_REDIS_TLS_KEY_FILE: privateKeyFile,
  /** Prefix of the bucket keys in that Redis. */
  RATE_LIMIT_KEY_PREFIX: z.string().default('meridian:rps:'),
  /** How long a process may spend tokens leased from the fleet store before the rest goes back. */
  RATE_LIMIT_LEASE_MS: int(10).max(5_000).default(250),
  /**
   * A lease the store has not answered in this time is taken from the process's own bucket,
   * while the store is degraded (it missed a deadline and has met none since).
   */
  RATE_LIMIT_STORE_TIMEOUT_MS: int(10).max(5_000).default(200),
  /**
   * The same deadline while the store is healthy (at least the timeout): a moment's slowness
   * of Redis or of this process is waited out, not answered from the process's own bucket on
   * top of the fleet's (ADR 0102, "Patience").
   */
  RATE_LIMIT_STORE_PATIENCE_MS: int(10).max(10_000).default(1_000),
  WS_MAX_SUBSCRIPTIONS_PER_CONNECTION: int(1).default(100),
  WS_MAX_SUBSCRIPTIONS_PER_ACCOUNT: int(1).default(1_000),
  /** A client whose unsent data exceeds this is disconnected (it is not reading). */
  WS_MAX_BUFFERED_BYTES: int(1024).default(4 * 1024 * 1024),
  WS_MAX_MESSAGE_BYTES: int(1024).default(5 * 1024 * 1024),
  /**
   * Calls one WebSocket connection may have in flight (a batch counts its calls); a message past
   * it is answered -32005 at once (ADR 0203 amendment). 200: two full batches (MAX_BATCH 100),
   * and more than the largest plan's RPS (800) can use at an upstream's usual 50-250 ms.
   */
  WS_MAX_CALLS_IN_FLIGHT_PER_CONNECTION: int(1).default(200),
  /**
   * Open WebSocket connections per access token in one gateway process; the next upgrade is
   * answered 429. 100: ten connections fill an account's 1000 subscriptions; at 100 one token
   * holds at most 100 of the process's file descriptors.
   */
  WS_MAX_CONNECTIONS_PER_TOKEN: int(1).default(100),
  /**
   * One account's budget in one gateway process, across all its tokens and connections (ADR 0203
   * amendment "One account's budget per process"). Open connections: the next upgrade is answered
   * 429. 250: two and a half tokens at their cap, and a process's 20,000 descriptors take 80
   * accounts at the cap.
   */
  WS_MAX_CONNECTIONS_PER_ACCOUNT: int(1).default(DEFAULT_ACCOUNT_BUDGET.connections),
  /**
   * Calls in flight per account (a batch counts its calls); a message past it is answered -32005
   * at once. 1,000: five connections at their cap, and more than the largest plan's RPS (800)
   * can use at an upstream's usual latency.
   */
  WS_MAX_CALLS_IN_FLIGHT_PER_ACCOUNT: int(1).default(DEFAULT_ACCOUNT_BUDGET.callsInFlight),
  /**
   * Bytes of answers queued to an account's connections and not yet written to their sockets;
   * past it the account's connection holding the most is closed 1013. At least
   * MAX_RESPONSE_BYTES (checked below). 64 MiB: two answers at the default MAX_RESPONSE_BYTES.
   */
  WS_MAX_UNREAD_BYTES_PER_ACCOUNT: int(1024 * 1024).default(DEFAULT_ACCOUNT_BUDGET.unreadBytes),
  /**
   * How often the subscription hub checks each network's upstream WebSocket and pings it, and
   * how long a ping may go unanswered before the socket counts as silent and is given up for
   * another node, the gap filled (ADR 0203 amendment "silent upstream").
   */
  WS_UPSTREAM_CHECK_MS: int(50).default(5_000),
  WS_UPSTREAM_PONG_TIMEOUT_MS: int(50).default(10_000),
  /**
   * Processes serving this replica's traffic (ADR 0204): 1 = this process alone; more = a
   * primary that shares the listening ports among that many workers; `auto` = one per CPU.
   */
  GATEWAY_WORKERS: z
    .union([z.literal('auto'), int(1).max(64)])
    .default(1)
    .transform((value) => (value === 'auto' ? availableParallelism() : value)),
  /**
   * How far V8 lets the old generation grow past the live heap before the next full
   * (mark-compact) collection, in percent (ADR 0206): 300 = to 4× the live heap; 0 = V8's own
   * heuristics. Fewer full collections, each a stall of tens of ms, for more memory.
   */
  HEAP_GROWING_PERCENT: int(0).max(1_000).default(300),
});

export const configSchema = settings.superRefine((config, ctx) => {
  if (config.MAX_ANSWER_BYTES_IN_FLIGHT < config.MAX_RESPONSE_BYTES)
    ctx.addIssue({
      code: 'custom',
      path: ['MAX_ANSWER_BYTES_IN_FLIGHT'],
      message: `must be at least MAX_RESPONSE_BYTES (${config.MAX_RESPONSE_BYTES}): an answer at that limit could never be read (ADR 0215)`,
    });
  if (config.WS_MAX_UNREAD_BYTES_PER_ACCOUNT < config.MAX_RESPONSE_BYTES)
    ctx.addIssue({
      code: 'custom',
      path: ['WS_MAX_UNREAD_BYTES_PER_ACCOUNT'],
      message: `must be at least MAX_RESPONSE_BYTES (${config.MAX_RESPONSE_BYTES}): one answer at that limit would cut its connection`,
    });
  if (config.NODE_ENV === 'production' && config.FILTER_ID_KEY === undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['FILTER_ID_KEY'],
      message:
        'is required with NODE_ENV=production: the same key on every replica of an endpoint, or a filter made on one replica is "filter not found" on the others (deploy/README.md, Secrets)',
    });
});

export type AppConfig = z.infer<typeof configSchema>;
