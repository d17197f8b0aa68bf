import { type DomainError, quoteInput } from '@meridian/errors';
import { invalidParams } from './gateway-errors';

/**
 * The shape of a log filter, the one rule for every call that takes one: eth_getLogs and
 * eth_newFilter (HTTP and WebSocket, request-checks.ts through logs-range.ts) and the filter of
 * an eth_subscribe "logs" (subscribe-params.ts). A malformed filter is refused here, -32602
 * with the field named, unbilled and before any node is asked (it was relayed, and the node's
 * -32602 billed like any node error).
 *
 * Refused is only what real nodes refuse too: go-ethereum (the filter's UnmarshalJSON) and
 * anvil/reth (alloy's Filter), measured against anvil 1.7. What either takes passes, so a
 * client that works against its node is never refused here:
 * - `address`: absent, null, one address or a list (anvil takes null entries too);
 * - `topics`: absent, null, or a list of at most 4 positions, each null, a topic or a list of
 *   topics and nulls (`[]` matches anything); a list one level deeper is no topic;
 * - an address (20 bytes) and a topic or blockHash (32 bytes) are hex, `0x` (geth also `0X`,
 *   anvil also no prefix) and exactly 40 or 64 hex digits of either case;
 * - `fromBlock`, `toBlock`: absent, null, a tag (earliest, latest, safe, finalized, pending; anvil
 *   takes any case) or a hex quantity `0x…` (leading zeros taken, as anvil does); a JSON number
 *   or a decimal string is refused by both;
 * - `blockHash` with a `fromBlock` or `toBlock` other than null is refused by both;
 * - fields we do not know are left to the node (geth ignores them, anvil refuses them).
 * One exception to "either takes it": go-ethereum stops reading a topic list at its first null,
 * so it takes `[[null, "garbage"]]`; a malformed topic is refused wherever it stands.
 * Loops, no recursion; a list deeper than the rule allows is refused without walking it.
 */

/** Topic positions a log has (go-ethereum and alloy refuse more). */
export const MAX_TOPIC_POSITIONS = 4;

const ADDRESS = /^(?:0[xX])?[0-9a-fA-F]{40}$/;
const HASH = /^(?:0[xX])?[0-9a-fA-F]{64}$/;
const QUANTITY = /^0[xX][0-9a-fA-F]+$/;

/** A block bound that follows the head (latest, safe, finalized, pending, omitted). */
export const HEAD_BOUND = -1;
/** A block bound that is neither a hex quantity nor a tag. */
export const MALFORMED_BOUND = -2;

const HEAD_TAGS: ReadonlySet<string> = new Set(['latest', 'safe', 'finalized', 'pending']);

const BLOCK_WORDS =
  'a block number in hex (0x…) or one of earliest, latest, safe, finalized, pending';
const ADDRESS_WORDS = 'a 20-byte address in hex (0x and 40 hex digits)';
const TOPIC_WORDS = 'a 32-byte topic in hex (0x and 64 hex digits)';

const TOPICS_NOT_A_LIST = invalidParams(
  `log filter topics is a list of at most ${MAX_TOPIC_POSITIONS} positions, each null, ${TOPIC_WORDS} or a list of those`,
);
const HASH_AND_RANGE = invalidParams('a log filter takes blockHash or fromBlock/toBlock, not both');

interface LogFilterFields {
  address?: unknown;
  topics?: unknown;
  fromBlock?: unknown;
  toBlock?: unknown;
  blockHash?: unknown;
}

/**
 * Null when `filter` is a log filter a node may be asked with; otherwise why not (-32602).
 * @param notAnObject the refusal when `filter` is no object (each method words its own)
 */
export function checkLogFilter(filter: unknown, notAnObject: DomainError): DomainError | null {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) return notAnObject;
  const { address, topics, fromBlock, toBlock, blockHash } = filter as LogFilterFields;
  if (address !== undefined && address !== null) {
    if (Array.isArray(address)) {
      const list = address as unknown[];
      for (let i = 0; i < list.length; i++) {
        const one = list[i];
        if (one !== null && !isAddress(one))
          return invalidParams(
            `log filter address[${i}] ${shown(one)} is not ${ADDRESS_WORDS} or null`,
          );
      }
    } else if (!isAddress(address))
      return invalidParams(
        `log filter address ${shown(address)} is not ${ADDRESS_WORDS} or a list of them`,
      );
  }
  const badTopics = checkTopics(topics);
  if (badTopics !== null) return badTopics;
  if (blockHash !== undefined && blockHash !== null) {
    if (!isHash(blockHash))
      return invalidParams(
        `log filter blockHash ${shown(blockHash)} is not a 32-byte block hash in hex (0x and 64 hex digits)`,
      );
    if (
      (fromBlock !== undefined && fromBlock !== null) ||
      (toBlock !== undefined && toBlock !== null)
    )
      return HASH_AND_RANGE;
    return null;
  }
  if (blockBoundOf(fromBlock) === MALFORMED_BOUND)
    return invalidParams(`log filter fromBlock ${shown(fromBlock)} is not ${BLOCK_WORDS}`);
  if (blockBoundOf(toBlock) === MALFORMED_BOUND)
    return invalidParams(`log filter toBlock ${shown(toBlock)} is not ${BLOCK_WORDS}`);
  return null;
}

function checkTopics(topics: unknown): DomainError | null {
  if (topics === undefined || topics === null) return null;
  if (!Array.isArray(topics)) return TOPICS_NOT_A_LIST;
  const positions = topics as unknown[];
  if (positions.length > MAX_TOPIC_POSITIONS)
    return invalidParams(
      `log filter topics has ${positions.length} positions; a log has at most ${MAX_TOPIC_POSITIONS}`,
    );
  for (let i = 0; i < positions.length; i++) {
    const position = positions[i];
    if (position === null || isTopic(position)) continue;
    if (!Array.isArray(position))
      return invalidParams(
        `log filter topics[${i}] ${shown(position)} is not null, ${TOPIC_WORDS} or a list of those`,
      );
    const alternatives = position as unknown[];
    for (let j = 0; j < alternatives.length; j++) {
      const one = alternatives[j];
      if (one !== null && !isTopic(one))
        return invalidParams(
          `log filter topics[${i}][${j}] ${shown(one)} is not ${TOPIC_WORDS} or null`,
        );
    }
  }
  return null;
}

/**
 * A block bound of a log filter: its number (≥ 0, possibly beyond 2^53), HEAD_BOUND (a tag that
 * follows the head, or omitted) or MALFORMED_BOUND. Numbers, not objects: nothing allocated.
 */
export function blockBoundOf(value: unknown): number {
  if (value === undefined || value === null) return HEAD_BOUND;
  if (typeof value !== 'string') return MALFORMED_BOUND;
  if (QUANTITY.test(value)) return Number.parseInt(value, 16);
  if (HEAD_TAGS.has(value)) return HEAD_BOUND;
  if (value === 'earliest') return 0;
  if (value.length > 9) return MALFORMED_BOUND;
  const tag = value.toLowerCase();
  if (HEAD_TAGS.has(tag)) return HEAD_BOUND;
  return tag === 'earliest' ? 0 : MALFORMED_BOUND;
}

const isAddress = (value: unknown): boolean => typeof value === 'string' && ADDRESS.test(value);
const isTopic = (value: unknown): boolean => typeof value === 'string' && HASH.test(value);
const isHash = isTopic;

/** A filter field as the refusal shows it: a string quoted (and cut), else its JSON type. */
function shown(value: unknown): string {
  if (typeof value === 'string') return quoteInput(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  return Array.isArray(value) ? 'a list' : 'an object';
}
