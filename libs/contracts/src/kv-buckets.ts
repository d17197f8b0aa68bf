/**
 * NATS KV buckets for hot-path state every replica holds in memory (watched into a Map by
 * @meridian/platform-messaging `KvMirror`). Names unprefixed; provisioned with the streams.
 */
export interface KvBucketDeclaration {
  readonly name: string;
  readonly description: string;
  /** Writer (documentation). */
  readonly owner: string;
  /** Values kept per key (1 = latest only). */
  readonly history: number;
  /** Entries expire after this (0 = never). */
  readonly ttlMs: number;
  readonly maxValueSize: number;
}

const HOUR = 3_600_000;

export const KvBuckets = {
  /**
   * Key: account id. Value: BalanceStateChanged payload (latest version). Read by rpc-gateway
   * (402 when exhausted), delivery-worker (hold deliveries), audit-api.
   */
  balanceState: {
    name: 'billing-balance-state',
    description: 'latest balance state, plan and caps per account',
    owner: 'billing-ledger',
    history: 1,
    ttlMs: 0,
    maxValueSize: 16 * 1024,
  },
  /**
   * Key: `<credentialType>.<sha256 hex of the secret>` (see revokedCredentialKey). Value:
   * CredentialRevoked payload. Evicts cached credentials on every replica at once; an entry
   * only has to outlive the credential caches (billing answers found=false for revoked ones).
   */
  revokedCredentials: {
    name: 'billing-revoked-credentials',
    description: 'recently rolled, deleted or revoked access tokens and API keys',
    owner: 'billing-ledger',
    history: 1,
    ttlMs: 24 * HOUR,
    maxValueSize: 4 * 1024,
  },
  /**
   * Key: webhook id. Value: WebhookStatusEntry. Lets delivery-worker drop queued jobs of a
   * webhook that was paused or deleted after the job was published.
   */
  webhookStatus: {
    name: 'webhook-status',
    description: 'current status of every webhook (delivery-worker drops jobs of paused ones)',
    owner: 'webhook-matcher',
    history: 1,
    ttlMs: 0,
    maxValueSize: 4 * 1024,
  },
  /**
   * Key: network key. Value: IndexerLease (holder id). One chain-indexer replica per network
   * publishes: the holder renews the entry (compare-and-set on its revision); another replica
   * takes it over only after seeing the revision unchanged for a lease time on its own clock.
   */
  indexerLeases: {
    name: 'chain-indexer-leases',
    description: 'leader lease per network: the one chain-indexer replica that publishes it',
    owner: 'chain-indexer',
    history: 1,
    ttlMs: 0,
    maxValueSize: 1024,
  },
} as const satisfies Record<string, KvBucketDeclaration>;

export const allKvBuckets: readonly KvBucketDeclaration[] = Object.values(KvBuckets);

/** Key of a revoked credential in KvBuckets.revokedCredentials. */
export function revokedCredentialKey(
  credentialType: 'access_token' | 'api_key',
  sha256Hex: string,
): string {
  return `${credentialType}.${sha256Hex.toLowerCase()}`;
}
