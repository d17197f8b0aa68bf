import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Filters live in one node's memory, so the id handed to the client names that node:
 * `0x` + 8 hex digits of sha256(upstream URL) + the node's own id (hex, without its 0x).
 * Stateless: after a gateway restart (or on another replica with the same upstream list) the
 * id still routes to the node that created it; the tag is fixed-width, so decoding is
 * unambiguous, and derived from the URL, so reordering the config does not misroute.
 */
export const FILTER_TAG_HEX = 8;
/**
 * A log filter whose range grows with the chain (a fixed fromBlock, toBlock at the head) also
 * carries its fromBlock, so that eth_getFilterLogs can be held to the block-range cap on any
 * replica (ADR 0211): `0x` + the node's floor tag (a second tag of the same URL, so old and new
 * ids never read alike) + FLOOR_HEX digits of fromBlock + the node's own id.
 */
export const FLOOR_HEX = 12;

export function upstreamTag(url: string): string {
  return createHash('sha256').update(url).digest('hex').slice(0, FILTER_TAG_HEX);
}

/** The tag of the node's filters that carry a fromBlock (see FLOOR_HEX). */
export function upstreamFloorTag(url: string): string {
  return upstreamTag(`${url}#floor`);
}

export function encodeFilterId(tag: string, upstreamFilterId: string): string | undefined {
  if (!/^0x[0-9a-fA-F]+$/.test(upstreamFilterId)) return undefined;
  return `0x${tag}${upstreamFilterId.slice(2)}`;
}

/** A filter id carrying the filter's fixed fromBlock (`floorTag` is the node's floor tag). */
export function encodeFloorFilterId(
  floorTag: string,
  fromBlock: number,
  upstreamFilterId: string,
): string | undefined {
  if (!Number.isSafeInteger(fromBlock) || fromBlock < 0 || fromBlock >= 16 ** FLOOR_HEX)
    return undefined;
  return encodeFilterId(
    floorTag,
    `0x${fromBlock.toString(16).padStart(FLOOR_HEX, '0')}${upstreamFilterId.slice(2)}`,
  );
}

/** The fromBlock and the node's id in the rest of a floor-tagged id. */
export function splitFloor(
  upstreamFilterId: string,
): { fromBlock: number; upstreamFilterId: string } | undefined {
  const body = upstreamFilterId.slice(2);
  if (body.length <= FLOOR_HEX) return undefined;
  return {
    fromBlock: Number.parseInt(body.slice(0, FLOOR_HEX), 16),
    upstreamFilterId: `0x${body.slice(FLOOR_HEX)}`,
  };
}

export function decodeFilterId(
  clientFilterId: unknown,
): { tag: string; upstreamFilterId: string } | undefined {
  if (typeof clientFilterId !== 'string' || !/^0x[0-9a-fA-F]+$/.test(clientFilterId))
    return undefined;
  const body = clientFilterId.slice(2);
  if (body.length <= FILTER_TAG_HEX) return undefined;
  return {
    tag: body.slice(0, FILTER_TAG_HEX).toLowerCase(),
    upstreamFilterId: `0x${body.slice(FILTER_TAG_HEX)}`,
  };
}

/** The methods that take a filter id, the gateway's (`0x…` + seal), as their one param. */
export const FILTER_ID_METHODS: ReadonlySet<string> = new Set([
  'eth_getFilterChanges',
  'eth_getFilterLogs',
  'eth_uninstallFilter',
]);

/** Hex digits of the owner's seal at the end of every filter id (64 bits). */
export const FILTER_SEAL_HEX = 16;

/**
 * Binds a filter to who made it: its id ends in a seal, FILTER_SEAL_HEX hex digits of
 * HMAC-SHA256(FILTER_ID_KEY, endpoint, network, account, the rest of the id). A filter call
 * whose id does not carry the seal of the caller's account (another account's filter, the same
 * account's filter on another network or endpoint, an id edited or guessed) is answered as an
 * unknown id, before any node is asked: nothing tells another account's filter from none.
 * Stateless like the rest of the id: every process of every replica with the same key opens it
 * (ADR 0202). The seal, not the node's id, is the secret part: a node may number its filters
 * 0x1, 0x2, … and a caller still cannot name another account's.
 */
export class FilterIdSeal {
  private readonly key: Buffer;

  constructor(
    key: string,
    private readonly endpoint: string,
  ) {
    this.key = Buffer.from(key, 'utf8');
  }

  /** The id the client gets: `id` with the seal of its account appended. */
  seal(id: string, network: string, accountId: string): string {
    return `${id}${this.of(id, network, accountId)}`;
  }

  /**
   * The id without its seal when the seal is the caller's; undefined for anything else (not a
   * hex id, too short to hold a seal, another owner's). Compared in constant time.
   */
  open(clientId: unknown, network: string, accountId: string): string | undefined {
    if (typeof clientId !== 'string' || !/^0x[0-9a-fA-F]+$/.test(clientId)) return undefined;
    if (clientId.length <= 2 + FILTER_SEAL_HEX) return undefined;
    const id = clientId.slice(0, -FILTER_SEAL_HEX);
    const given = Buffer.from(clientId.slice(-FILTER_SEAL_HEX).toLowerCase(), 'latin1');
    const expected = Buffer.from(this.of(id, network, accountId), 'latin1');
    return timingSafeEqual(given, expected) ? id : undefined;
  }

  private of(id: string, network: string, accountId: string): string {
    // The id last: it holds no newline, so the fields before it cannot be shifted into it.
    return createHmac('sha256', this.key)
      .update(`${this.endpoint}\n${network}\n${accountId}\n${id.toLowerCase()}`)
      .digest('hex')
      .slice(0, FILTER_SEAL_HEX);
  }
}

/**
 * A key for FilterIdSeal when FILTER_ID_KEY is unset: random, made once per replica (the
 * primary hands it to its workers), so filters then work only on the replica that made them.
 */
export function randomFilterIdKey(logger: { warn(message: string): void }): string {
  logger.warn(
    'FILTER_ID_KEY is not set: filter ids are sealed with a key of this replica only, so a filter works only on the replica that made it, until it restarts',
  );
  return randomBytes(32).toString('hex');
}
