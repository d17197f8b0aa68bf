/**
 * JetStream streams, declared as data and created by the provisioning command
 * (`tools/messaging/provision.ts`), never implicitly at app start. Names and subjects are
 * unprefixed; @meridian/platform-messaging applies NATS_PREFIX.
 */
export interface StreamDeclaration {
  /** Stream name (unprefixed), e.g. CHAIN. */
  readonly name: string;
  /** Unprefixed subject filters the stream captures. */
  readonly subjects: readonly string[];
  readonly description: string;
  /** Messages older than this are removed (limits retention). */
  readonly maxAgeMs: number;
  /** Window in which a repeated Nats-Msg-Id is dropped as a duplicate. */
  readonly duplicateWindowMs: number;
  readonly storage: 'file';
  /** Largest message the stream accepts; keep ≤ the server's max_payload (1 MiB by default). */
  readonly maxMsgSize: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const MIB = 1024 * 1024;

export const Streams = {
  /** Canonical blocks and reorg removals from chain-indexer. */
  CHAIN: {
    name: 'CHAIN',
    subjects: ['chain.>'],
    description: 'canonical blocks (txs, receipts, logs) and reorg removals per network',
    // Long enough to rebuild matcher state after a day-long outage; blocks are re-fetchable.
    maxAgeMs: 2 * DAY,
    duplicateWindowMs: 10 * MINUTE,
    storage: 'file',
    maxMsgSize: MIB,
  },
  /** Delivery jobs and delivery-attempt outcomes. */
  WEBHOOK: {
    name: 'WEBHOOK',
    subjects: ['webhook.>'],
    description: 'webhook delivery jobs and delivery health',
    // The retry schedule spans ~51 min plus up to 10 min of waiting; keep a wide margin.
    maxAgeMs: 3 * DAY,
    duplicateWindowMs: 10 * MINUTE,
    storage: 'file',
    maxMsgSize: MIB,
  },
  /** Usage, balance and plan changes, credential revocations, cleared top-ups. */
  BILLING: {
    name: 'BILLING',
    subjects: ['billing.>'],
    description: 'usage (CU), balance and plan changes, revoked credentials, cleared top-ups',
    // Usage is money: keep it for a week so the ledger can catch up after any outage.
    maxAgeMs: 7 * DAY,
    // Producers retry a failed flush with the same id; the window must outlast their retries.
    duplicateWindowMs: 30 * MINUTE,
    storage: 'file',
    maxMsgSize: MIB,
  },
} as const satisfies Record<string, StreamDeclaration>;

export type StreamName = keyof typeof Streams;

export const allStreams: readonly StreamDeclaration[] = Object.values(Streams);
