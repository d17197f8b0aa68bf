import {
  isReplicaMessage,
  REPLICA_NS,
  type PrimaryMessage,
  type ReplicaRequests,
  type RequestKind,
  type WorkerMessage,
} from './replica-messages';

/** The IPC end a worker process has (`process` under node:cluster). */
export interface IpcPort {
  send?(message: unknown): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

/** A primary that does not answer within this time is treated as gone for that request. */
const REQUEST_TIMEOUT_MS = 5_000;

/**
 * A worker's line to its replica's primary (ADR 0204): requests with answers (leases,
 * subscription reservations, upstream subscriptions, aggregated metrics), one-way notices, and the
 * primary's pushes (subscription notifications, metric collection).
 */
export class ReplicaLink {
  private nextRid = 1;
  private readonly pending = new Map<
    number,
    { resolve(answer: unknown): void; reject(error: Error): void; timer: NodeJS.Timeout }
  >();
  private notifyHandler: (id: string, resultText: string) => void = () => undefined;
  private endHandler: (id: string, missedAbove: number) => void = () => undefined;
  private metricsSource: () => Promise<unknown[]> = () => Promise.resolve([]);

  constructor(private readonly port: IpcPort) {
    port.on('message', (message) => {
      if (isReplicaMessage<PrimaryMessage>(message)) this.receive(message);
    });
  }

  request<K extends RequestKind>(
    type: K,
    body: ReplicaRequests[K]['request'],
  ): Promise<ReplicaRequests[K]['answer']> {
    const rid = this.nextRid++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(rid);
        reject(new Error(`replica primary did not answer ${type}`));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(rid, { resolve: resolve as (a: unknown) => void, reject, timer });
      if (!this.post({ ns: REPLICA_NS, kind: 'request', rid, type, body })) {
        clearTimeout(timer);
        this.pending.delete(rid);
        reject(new Error('replica primary is gone'));
      }
    });
  }

  release(accountId: string): void {
    this.post({ ns: REPLICA_NS, kind: 'release', accountId });
  }

  unsubscribe(id: string): void {
    this.post({ ns: REPLICA_NS, kind: 'unsubscribe', id });
  }

  onNotify(handler: (id: string, resultText: string) => void): void {
    this.notifyHandler = handler;
  }

  /** A subscription of the primary's hub that missed more than it fills (ADR 0203). */
  onEnd(handler: (id: string, missedAbove: number) => void): void {
    this.endHandler = handler;
  }

  /** What this worker contributes when the primary aggregates the replica's metrics. */
  provideMetrics(source: () => Promise<unknown[]>): void {
    this.metricsSource = source;
  }

  private post(message: WorkerMessage): boolean {
    try {
      return this.port.send?.(message) ?? false;
    } catch {
      return false;
    }
  }

  private receive(message: PrimaryMessage): void {
    if (message.kind === 'reply') {
      const waiter = this.pending.get(message.rid);
      if (waiter === undefined) return;
      this.pending.delete(message.rid);
      clearTimeout(waiter.timer);
      // The primary answers nothing when handling the request failed (it logs why).
      if (message.answer === undefined) waiter.reject(new Error('replica primary failed'));
      else waiter.resolve(message.answer);
    } else if (message.kind === 'notify') {
      this.notifyHandler(message.id, message.result);
    } else if (message.kind === 'end') {
      this.endHandler(message.id, message.missedAbove);
    } else {
      const rid = message.rid;
      void this.metricsSource().then(
        (metrics) => this.post({ ns: REPLICA_NS, kind: 'metrics-json', rid, metrics }),
        () => this.post({ ns: REPLICA_NS, kind: 'metrics-json', rid, metrics: [] }),
      );
    }
  }
}
