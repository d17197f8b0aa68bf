import type { NetworkKey } from '@meridian/networks';
import type { ReplicaLink } from '../replica/replica-link';
import {
  ClientFanOut,
  UpstreamSubscribeError,
  type NetworkSubscriptionPort,
  type SubscriberSink,
  type Subscriptions,
} from './subscription-hub';

interface Entry {
  readonly key: string;
  /** The subscription id the primary gave this process (one per distinct params). */
  remoteId: string | undefined;
  readonly established: Promise<string>;
  readonly sinks: Map<string, SubscriberSink>;
  waiting: number;
}

/**
 * A worker process's view of the replica's subscriptions (ADR 0204): the primary holds the
 * upstream subscriptions (one per network and distinct params for the whole replica) and sends
 * each notification once to every process that asked; this process fans it out to its own
 * clients. The per-account count is the primary's too.
 */
export class RemoteSubscriptions implements Subscriptions {
  private readonly networks = new Map<NetworkKey, RemoteNetworkSubscriptions>();
  private readonly byRemoteId = new Map<string, Entry>();

  constructor(
    private readonly link: ReplicaLink,
    /** Networks with upstreams in this replica (others have no subscriptions). */
    private readonly offered: ReadonlySet<NetworkKey>,
  ) {
    link.onNotify((remoteId, resultText) => {
      const entry = this.byRemoteId.get(remoteId);
      if (entry !== undefined) ClientFanOut.notify(entry, resultText);
    });
    link.onEnd((remoteId, missedAbove) => {
      const entry = this.byRemoteId.get(remoteId);
      if (entry !== undefined) ClientFanOut.end(entry, missedAbove);
    });
  }

  of(network: NetworkKey): NetworkSubscriptionPort | undefined {
    if (!this.offered.has(network)) return undefined;
    let subs = this.networks.get(network);
    if (subs === undefined) {
      subs = new RemoteNetworkSubscriptions(network, this.link, this.byRemoteId);
      this.networks.set(network, subs);
    }
    return subs;
  }

  reserve(accountId: string, limit: number): Promise<boolean> {
    return this.link.request('reserve', { accountId, limit });
  }

  release(accountId: string): void {
    this.link.release(accountId);
  }

  close(): void {
    this.networks.clear();
  }
}

class RemoteNetworkSubscriptions implements NetworkSubscriptionPort {
  private readonly shared = new Map<string, Entry>();
  private readonly clients = new ClientFanOut<Entry>();

  constructor(
    private readonly network: NetworkKey,
    private readonly link: ReplicaLink,
    private readonly byRemoteId: Map<string, Entry>,
  ) {}

  async subscribe(params: readonly unknown[], sink: SubscriberSink): Promise<string> {
    const key = JSON.stringify(params);
    let entry = this.shared.get(key);
    if (entry === undefined) {
      const created: Entry = {
        key,
        remoteId: undefined,
        established: this.establish(params).then((remoteId) => {
          created.remoteId = remoteId;
          this.byRemoteId.set(remoteId, created);
          return remoteId;
        }),
        sinks: new Map(),
        waiting: 0,
      };
      entry = created;
      this.shared.set(key, entry);
    }
    entry.waiting++;
    try {
      await entry.established;
    } catch (error) {
      if (this.shared.get(key) === entry) this.shared.delete(key);
      throw error;
    } finally {
      entry.waiting--;
    }
    return this.clients.add(entry, sink);
  }

  unsubscribe(clientId: string): boolean {
    const entry = this.clients.remove(clientId);
    if (entry === undefined) return false;
    if (entry.sinks.size === 0 && entry.waiting === 0) {
      this.shared.delete(entry.key);
      if (entry.remoteId !== undefined) {
        this.byRemoteId.delete(entry.remoteId);
        this.link.unsubscribe(entry.remoteId);
      }
    }
    return true;
  }

  private async establish(params: readonly unknown[]): Promise<string> {
    const answer = await this.link.request('subscribe', { network: this.network, params });
    if (answer.ok) return answer.id;
    if (answer.refused !== null) throw new UpstreamSubscribeError(answer.refused);
    throw new Error('upstream subscription not established');
  }
}
