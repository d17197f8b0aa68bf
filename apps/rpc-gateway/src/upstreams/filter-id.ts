import { createHash } from 'node:crypto';

/**
 * Filters live in one node's memory, so the id handed to the client names that node:
 * `0x` + 8 hex digits of sha256(upstream URL) + the node's own id (hex, without its 0x).
 * Stateless: after a gateway restart (or on another replica with the same upstream list) the
 * id still routes to the node that created it; the tag is fixed-width, so decoding is
 * unambiguous, and derived from the URL, so reordering the config does not misroute.
 */
export const FILTER_TAG_HEX = 8;

export function upstreamTag(url: string): string {
  return createHash('sha256').update(url).digest('hex').slice(0, FILTER_TAG_HEX);
}

export function encodeFilterId(tag: string, upstreamFilterId: string): string | undefined {
  if (!/^0x[0-9a-fA-F]+$/.test(upstreamFilterId)) return undefined;
  return `0x${tag}${upstreamFilterId.slice(2)}`;
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
