/**
 * The units a block is matched in: each transaction, and each log of its receipt. Transfer
 * participants are read straight from the topics (no ABI decoding on the hot path: most logs
 * of a block match nothing); full decoding happens only for matched logs (payload.ts).
 */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
export const APPROVAL_TOPIC = '0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925';
export const TRANSFER_SINGLE_TOPIC =
  '0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62';
export const TRANSFER_BATCH_TOPIC =
  '0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb';

export interface Activity {
  readonly kind: 'tx' | 'log';
  readonly txHash: string;
  /** The log's index in the block; null for the transaction itself. */
  readonly logIndex: number | null;
  /** Sender of the transaction, or `from` of a token transfer (lower case). */
  readonly from: string | null;
  /** Recipient of the transaction, or `to` of a token transfer (lower case). */
  readonly to: string | null;
  /** The contract that emitted the log (lower case); null for a transaction. */
  readonly emitter: string | null;
  /** What a `contract` leaf compares: the log's emitter, or the transaction's `to`. */
  readonly contract: string | null;
  /** Lower-case topics of a log; empty for a transaction. */
  readonly topics: readonly string[];
  /** The transaction or log as the node returned it (forwarded as `raw`). */
  readonly raw: Record<string, unknown>;
}

interface RawTx {
  hash: string;
  from: string;
  to: string | null;
  [key: string]: unknown;
}
interface RawLog {
  address: string;
  topics: readonly string[];
  logIndex: string;
  transactionHash: string;
  [key: string]: unknown;
}
export interface RawBlockBody {
  readonly transactions: readonly RawTx[];
  readonly receipts: readonly { readonly logs: readonly RawLog[] }[];
}

/** The 20-byte address in an indexed topic (the last 40 hex characters), lower case. */
export function topicAddress(topic: string): string {
  return `0x${topic.slice(26).toLowerCase()}`;
}

/** from/to of ERC-20 / ERC-721 Transfer and ERC-1155 TransferSingle/TransferBatch, else null. */
export function transferParticipants(
  topics: readonly string[],
): { from: string; to: string } | null {
  const t0 = topics[0];
  if (t0 === TRANSFER_TOPIC && topics.length >= 3)
    return { from: topicAddress(topics[1]!), to: topicAddress(topics[2]!) };
  if ((t0 === TRANSFER_SINGLE_TOPIC || t0 === TRANSFER_BATCH_TOPIC) && topics.length === 4)
    return { from: topicAddress(topics[2]!), to: topicAddress(topics[3]!) };
  return null;
}

export function txActivity(tx: RawTx): Activity {
  const to = tx.to === null ? null : tx.to.toLowerCase();
  return {
    kind: 'tx',
    txHash: tx.hash.toLowerCase(),
    logIndex: null,
    from: tx.from.toLowerCase(),
    to,
    emitter: null,
    contract: to,
    topics: [],
    raw: tx,
  };
}

export function logActivity(log: RawLog): Activity {
  const topics = log.topics.map((t) => t.toLowerCase());
  const transfer = transferParticipants(topics);
  const emitter = log.address.toLowerCase();
  return {
    kind: 'log',
    txHash: log.transactionHash.toLowerCase(),
    logIndex: Number.parseInt(log.logIndex, 16),
    from: transfer?.from ?? null,
    to: transfer?.to ?? null,
    emitter,
    contract: emitter,
    topics,
    raw: log,
  };
}

/**
 * Every activity of a block (or of one part of it): its transactions, then the logs of its
 * receipts, in block order. Nothing pairs a receipt with a transaction: a large block's parts
 * may carry a transaction without its receipt, or a slice of a receipt (a run of its logs).
 */
export function* blockActivities(block: RawBlockBody): Generator<Activity> {
  for (const tx of block.transactions) yield txActivity(tx);
  for (const receipt of block.receipts) for (const log of receipt.logs) yield logActivity(log);
}

const indexOf = (value: unknown): number =>
  typeof value === 'string' && /^0x[0-9a-f]+$/i.test(value) ? Number.parseInt(value, 16) : 0;

/**
 * Where an activity comes in its block, from the transaction or log the node returned (an
 * event's `raw`), in `blockActivities`' order: the transactions by `transactionIndex`, then the
 * logs by `logIndex`. Negative when `a` comes first. What is not a node's transaction or log
 * (no index) sorts as its block's first.
 */
export function compareInBlock(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const kind = (raw: Record<string, unknown>) => (raw['logIndex'] === undefined ? 0 : 1);
  const index = (raw: Record<string, unknown>) =>
    indexOf(kind(raw) === 0 ? raw['transactionIndex'] : raw['logIndex']);
  return kind(a) - kind(b) || index(a) - index(b);
}
