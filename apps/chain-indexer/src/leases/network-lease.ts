import { IndexerLeaseSchema, KvBuckets, type IndexerLease } from '@meridian/contracts';
import type { NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import type { Clock } from '@meridian/time';
import { Kvm, type KV } from '@nats-io/kv';

/**
 * The leader lease of one network in NATS KV (KvBuckets.indexerLeases, key = network). Only
 * compare-and-set writes: `create` when the key is free, `update(revision)` to renew or take over.
 *
 * Expiry is judged on each replica's own clock, never by comparing clocks across machines (the
 * Kubernetes leader-election rule): a contender takes the lease over only after it has watched
 * the entry's revision stay unchanged for a whole lease time. The holder counts its lease from
 * the moment it *sent* its last successful renewal, so it stops before any contender can start.
 * The revision it won is the fencing token the cursor row checks (ChainStateRepository).
 */
export class NetworkLease {
  private kv: KV | undefined;
  /** Revision of our last successful write while we hold the lease. */
  private heldRevision: number | undefined;
  /** Revision of the write that won the lease (stays while we renew): the fencing token. */
  private fence: number | undefined;
  private heldSinceSendMs = 0;
  private observed: { revision: number; sinceMs: number } | undefined;

  constructor(
    private readonly network: string,
    private readonly holder: string,
    private readonly ttlMs: number,
    private readonly clock: Clock,
    private readonly nats: { client: NatsClient; namespace: NatsNamespace },
  ) {}

  /** The fencing token while the lease is ours and unexpired on our clock, else undefined. */
  token(): number | undefined {
    if (this.heldRevision === undefined) return undefined;
    if (this.clock.now().getTime() >= this.heldSinceSendMs + this.ttlMs) {
      this.heldRevision = undefined;
      return undefined;
    }
    return this.fence;
  }

  /** Whether a renewal is due (a third of the lease time has passed since the last one). */
  renewDue(): boolean {
    return this.clock.now().getTime() >= this.heldSinceSendMs + this.ttlMs / 3;
  }

  /**
   * Acquires, renews or observes the lease (one KV round trip, two on a write). Returns the
   * fencing revision when the lease is ours afterwards.
   */
  async tick(): Promise<number | undefined> {
    const kv = await this.bucket();
    const sentMs = this.clock.now().getTime();
    const entry = await kv.get(this.network);
    const value: IndexerLease = {
      holder: this.holder,
      acquiredAt: new Date(sentMs).toISOString(),
      renewedAt: new Date(sentMs).toISOString(),
    };
    try {
      if (!entry || entry.operation !== 'PUT') {
        const revision = entry
          ? await kv.update(this.network, JSON.stringify(value), entry.revision)
          : await kv.create(this.network, JSON.stringify(value));
        return this.won(revision, sentMs);
      }
      const current = IndexerLeaseSchema.safeParse(safeJson(entry.string()));
      if (
        current.success &&
        current.data.holder === this.holder &&
        this.heldRevision === entry.revision
      ) {
        const revision = await kv.update(
          this.network,
          JSON.stringify({ ...value, acquiredAt: current.data.acquiredAt }),
          entry.revision,
        );
        return this.won(revision, sentMs);
      }
      // Someone else's (or a previous life of ours, which must age out like anyone's).
      this.heldRevision = undefined;
      if (this.observed?.revision !== entry.revision) {
        this.observed = { revision: entry.revision, sinceMs: sentMs };
        return undefined;
      }
      if (sentMs - this.observed.sinceMs < this.ttlMs) return undefined;
      const revision = await kv.update(this.network, JSON.stringify(value), entry.revision);
      return this.won(revision, sentMs);
    } catch (error) {
      // A lost compare-and-set race is not an error: someone else wrote first.
      if (isWrongRevision(error)) {
        this.heldRevision = undefined;
        return undefined;
      }
      throw error;
    }
  }

  /** Gives the lease up at once (graceful stop), so another replica needn't wait it out. */
  async release(): Promise<void> {
    const revision = this.heldRevision;
    this.heldRevision = undefined;
    if (revision === undefined || !this.kv) return;
    await this.kv.delete(this.network, { previousSeq: revision }).catch(() => undefined);
  }

  private won(revision: number, sentMs: number): number {
    if (this.heldRevision === undefined) this.fence = revision;
    this.heldRevision = revision;
    this.heldSinceSendMs = sentMs;
    this.observed = undefined;
    return this.fence!;
  }

  private async bucket(): Promise<KV> {
    this.kv ??= await new Kvm(this.nats.client.jetstream()).open(
      this.nats.namespace.bucket(KvBuckets.indexerLeases.name),
    );
    return this.kv;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isWrongRevision(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /wrong last sequence|key exists|10071/i.test(message);
}
