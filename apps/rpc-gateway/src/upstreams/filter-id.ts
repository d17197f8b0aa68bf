import { createHash } from 'node:crypto';

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
