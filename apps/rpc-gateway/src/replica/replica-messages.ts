import type { NetworkKey } from '@meridian/networks';
import type { LeaseAnswer, LeaseRequest } from '../limits/leased-rate-limiter';

/**
 * The messages between the primary and the worker processes of one replica (ADR 0204), over
 * Node's cluster IPC channel. Every message carries `ns` so it is never confused with another
 * library's cluster messages. Requests carry `rid`; the answer is a `reply` with the same `rid`.
 */
export const REPLICA_NS = 'meridian.rpc-gateway.replica';

/** What a worker asks of the primary, and what the primary answers. */
export interface ReplicaRequests {
  lease: { request: LeaseRequest; answer: LeaseAnswer };
  reserve: { request: { accountId: string; limit: number }; answer: boolean };
  subscribe: {
    request: { network: NetworkKey; params: readonly unknown[] };
    answer: { ok: true; id: string } | { ok: false; refused: string | null };
  };
  metrics: { request: Record<string, never>; answer: string };
}

export type RequestKind = keyof ReplicaRequests;

export type WorkerMessage =
  | { ns: typeof REPLICA_NS; kind: 'request'; rid: number; type: RequestKind; body: unknown }
  | { ns: typeof REPLICA_NS; kind: 'release'; accountId: string }
  | { ns: typeof REPLICA_NS; kind: 'unsubscribe'; id: string }
  | { ns: typeof REPLICA_NS; kind: 'metrics-json'; rid: number; metrics: unknown[] };

export type PrimaryMessage =
  | { ns: typeof REPLICA_NS; kind: 'reply'; rid: number; answer: unknown }
  | { ns: typeof REPLICA_NS; kind: 'notify'; id: string; result: string }
  /** The subscription's upstream gap was above `missedAbove` blocks (ADR 0203 amendment). */
  | { ns: typeof REPLICA_NS; kind: 'end'; id: string; missedAbove: number }
  | { ns: typeof REPLICA_NS; kind: 'collect-metrics'; rid: number };

export function isReplicaMessage<T extends { ns: string }>(message: unknown): message is T {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { ns?: unknown }).ns === REPLICA_NS
  );
}
