import type { DomainError } from '@meridian/errors';
import { invalidParams, limitExceeded, refusal } from './gateway-errors';
import { blockBoundOf, checkLogFilter, HEAD_BOUND as HEAD } from './log-filter';

/**
 * The block range of a log query (eth_getLogs, and the filter eth_newFilter makes, which is the
 * range eth_getFilterLogs reads), counted the way the node will read it: both ends inclusive,
 * `earliest` = 0, and `latest`, `safe`, `finalized`, `pending` or an omitted end = the network's
 * head (the best height the health checks saw). A `blockHash` query is one block: not ranged.
 * ADR 0211. The filter's shape (address, topics, block bounds) is log-filter.ts's rule, checked
 * first.
 */

/** Methods whose one parameter is a log filter with a block range. */
export const RANGED_LOG_METHODS: ReadonlySet<string> = new Set(['eth_getLogs', 'eth_newFilter']);

const FILTER_NOT_AN_OBJECT: Readonly<Record<string, DomainError>> = {
  eth_getLogs: invalidParams('eth_getLogs takes one filter object'),
  eth_newFilter: invalidParams('eth_newFilter takes one filter object'),
};

/**
 * A range that follows the head while the head is not known (no health check has answered yet,
 * or no node is healthy): its size cannot be told, so it is not sent. Retryable, like every
 * -32000: the next health check (HEALTH_INTERVAL_MS) brings the head back.
 */
export const HEAD_UNKNOWN = refusal(
  'head_unknown',
  'unavailable',
  `the head block of this network is not known yet; retry, or give fromBlock and toBlock as block numbers`,
);

/**
 * Null when the filter may be sent; otherwise why not: a malformed filter (log-filter.ts, -32602),
 * then a range over the cap. `head` is the network's head height, when known.
 */
export function checkLogsRange(
  method: string,
  params: readonly unknown[],
  maxRange: number,
  head: number | undefined,
): DomainError | null {
  const filter = params[0];
  const malformed = checkLogFilter(
    filter,
    FILTER_NOT_AN_OBJECT[method] ?? invalidParams(`${method} takes one filter object`),
  );
  if (malformed !== null) return malformed;
  const { fromBlock, toBlock, blockHash } = filter as {
    fromBlock?: unknown;
    toBlock?: unknown;
    blockHash?: unknown;
  };
  if (blockHash !== undefined && blockHash !== null) return null;
  let from = blockBoundOf(fromBlock);
  let to = blockBoundOf(toBlock);
  // Both ends at the head: one block, whatever the head is.
  if (from === HEAD && to === HEAD) return null;
  if (from === HEAD || to === HEAD) {
    if (head === undefined) return HEAD_UNKNOWN;
    if (from === HEAD) from = head;
    if (to === HEAD) to = head;
  }
  const count = to - from + 1;
  if (!(count > maxRange)) return null;
  // A range from a 400-digit number is no number to print ("Infinity").
  const size = Number.isSafeInteger(count) ? `${count} ` : '';
  return limitExceeded(
    `${method} block range ${size}is larger than ${maxRange} blocks (both ends count)`,
    rangeData(maxRange, count),
  );
}

/**
 * The fixed fromBlock of an eth_newFilter filter whose range grows with the chain (toBlock at the
 * head: latest, safe, finalized, pending or omitted); undefined for any other filter. Its
 * eth_getFilterLogs reads fromBlock..head, which passes the cap as the chain grows: the filter id
 * carries fromBlock so that the read can be refused then (`checkGrowingFilterLogs`).
 */
export function growingFloorOf(params: readonly unknown[]): number | undefined {
  const filter = params[0];
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) return undefined;
  const { fromBlock, toBlock, blockHash } = filter as {
    fromBlock?: unknown;
    toBlock?: unknown;
    blockHash?: unknown;
  };
  if (blockHash !== undefined && blockHash !== null) return undefined;
  const from = blockBoundOf(fromBlock);
  return from >= 0 && blockBoundOf(toBlock) === HEAD ? from : undefined;
}

/** eth_getFilterLogs of a growing filter (fromBlock..head): null while within the cap. */
export function checkGrowingFilterLogs(
  fromBlock: number,
  maxRange: number,
  head: number | undefined,
): DomainError | null {
  if (head === undefined) return HEAD_UNKNOWN;
  const count = head - fromBlock + 1;
  if (!(count > maxRange)) return null;
  return limitExceeded(
    `eth_getFilterLogs block range ${count} is larger than ${maxRange} blocks (both ends count): the filter's fromBlock is now too far behind the head; read its logs with eth_getLogs in ranges, or make a new filter`,
    rangeData(maxRange, count),
  );
}

/**
 * The refusal's `data`, as the batch refusal's (`{limit, size}`): the cap and the blocks asked
 * for, both ends counted; no size when it is no number to give (a 400-digit bound).
 */
function rangeData(maxRange: number, count: number): { limit: number; size?: number } {
  return Number.isSafeInteger(count) ? { limit: maxRange, size: count } : { limit: maxRange };
}
