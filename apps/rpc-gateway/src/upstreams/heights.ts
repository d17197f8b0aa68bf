import type { OutCall } from './upstream-router';

/**
 * Heights in answers (ADR 0202 amendment, "Heights"): the head a node shows in its answer to
 * eth_blockNumber (S: sui_getLatestCheckpointSequenceNumber), or the number of the block it
 * answers for 'latest'. The router raises a node's known height by them and never answers a
 * head lower than the pool's.
 */
export type HeightShown = { kind: 'number'; height: number } | { kind: 'block'; height: number };

/**
 * A block's own "number" member. Read from the text, not parsed: a block with its transactions
 * can be megabytes, and no member inside a block (transactions have "blockNumber", withdrawals
 * "index") is called "number" but the block's own.
 */
const BLOCK_NUMBER = /"number"\s*:\s*"(0x[0-9a-fA-F]{1,14})"/;
const QUANTITY = /^"0x[0-9a-fA-F]{1,14}"$/;
const DECIMAL = /^"[0-9]{1,15}"$/;

export function heightShown(call: OutCall, resultText: string): HeightShown | undefined {
  switch (call.method) {
    case 'eth_blockNumber':
      return QUANTITY.test(resultText)
        ? { kind: 'number', height: Number.parseInt(resultText.slice(3, -1), 16) }
        : undefined;
    case 'sui_getLatestCheckpointSequenceNumber':
      return DECIMAL.test(resultText)
        ? { kind: 'number', height: Number(resultText.slice(1, -1)) }
        : undefined;
    case 'eth_getBlockByNumber': {
      if (call.params[0] !== 'latest') return undefined;
      const found = BLOCK_NUMBER.exec(resultText);
      return found ? { kind: 'block', height: Number.parseInt(found[1]!.slice(2), 16) } : undefined;
    }
    default:
      return undefined;
  }
}

/** The answer text of a head `height` for a call that asked for one (`HeightShown` 'number'). */
export function headAnswer(call: OutCall, height: number): string {
  return call.method === 'sui_getLatestCheckpointSequenceNumber'
    ? `"${height}"`
    : `"0x${height.toString(16)}"`;
}

/** Methods that answer null for a block number the node does not have (yet). */
const BY_NUMBER = new Set([
  'eth_getBlockByNumber',
  'eth_getBlockReceipts',
  'eth_getBlockTransactionCountByNumber',
  'eth_getUncleCountByBlockNumber',
]);

/**
 * A null block for a number at or below the pool's head (QA: the block number just returned,
 * asked of a node a block behind, answered null): that node lacks it, another has it.
 */
export function isMissingBlock(call: OutCall, resultText: string, head: number): boolean {
  if (resultText !== 'null' || !BY_NUMBER.has(call.method)) return false;
  const tag = call.params[0];
  if (typeof tag !== 'string' || !/^0x[0-9a-fA-F]{1,14}$/.test(tag)) return false;
  return Number.parseInt(tag.slice(2), 16) <= head;
}
