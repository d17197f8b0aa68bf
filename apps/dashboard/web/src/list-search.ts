/**
 * Finding addresses in a list of up to 100,000: the entries route answers those starting with
 * `?prefix=` (webhook-matcher README "Entries paging"), paged in address order like the whole
 * list, so the page asks it and shows what it answers.
 */

export type ListSearch =
  { ok: true; prefix: string; whole: boolean } | { ok: false; message: string };

export const SEARCH_WORDS =
  'Search by the start of an address: 0x and up to 40 hex digits (0-9, a-f).';

/**
 * What the search box asks: undefined when it asks nothing (empty, or `0x` alone: every
 * address), else the prefix to ask the route with (`0x` and lower case, as the list stores
 * addresses) and whether it is a whole address (in the list or not).
 */
export function readListSearch(text: string): ListSearch | undefined {
  const trimmed = text.trim();
  const hex = /^0x/i.test(trimmed) ? trimmed.slice(2) : trimmed;
  if (!/^[0-9a-fA-F]{0,40}$/.test(hex)) return { ok: false, message: SEARCH_WORDS };
  if (hex === '') return undefined;
  const lower = hex.toLowerCase();
  return { ok: true, prefix: `0x${lower}`, whole: lower.length === 40 };
}

/** The entries route's query for a page: the route's cursor, and the search's prefix if any. */
export function entriesQuery(
  limit: number,
  cursor: string | undefined,
  search: ListSearch | undefined,
): string {
  const query = new URLSearchParams({ limit: String(limit) });
  if (cursor) query.set('cursor', cursor);
  if (search?.ok) query.set('prefix', search.prefix);
  return query.toString();
}
