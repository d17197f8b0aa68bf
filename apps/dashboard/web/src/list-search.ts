/**
 * Finding addresses in a list of up to 100,000 from its entries route, which pages in address
 * order with the previous page's last address as the cursor (webhook-matcher README "Entries
 * paging": `address > cursor`) and has no filter of its own. The first address that can start
 * with a prefix is the prefix padded with zeros, so a page asked with the cursor just below it
 * starts at the first match, and the matches end at the first entry that does not start with it.
 */

export type ListSearch =
  | { ok: true; prefix: string; cursor: string | undefined; whole: boolean }
  | { ok: false; message: string };

export const SEARCH_WORDS =
  'Search by the start of an address: 0x and up to 40 hex digits (0-9, a-f).';

/** The address just below `hex` (40 hex digits), or undefined below 0x00…0. */
function below(hex: string): string | undefined {
  const digits = hex.split('');
  for (let i = digits.length - 1; i >= 0; i--) {
    const d = parseInt(digits[i]!, 16);
    if (d > 0) {
      digits[i] = (d - 1).toString(16);
      return `0x${digits.join('')}`;
    }
    digits[i] = 'f';
  }
  return undefined;
}

/**
 * What the search box asks: undefined when it asks nothing (empty, or `0x` alone: every
 * address), else the prefix (lower case, as the list stores addresses), the cursor that starts
 * the first page at it, and whether it is a whole address (in the list or not).
 */
export function readListSearch(text: string): ListSearch | undefined {
  const trimmed = text.trim();
  const hex = /^0x/i.test(trimmed) ? trimmed.slice(2) : trimmed;
  if (!/^[0-9a-fA-F]{0,40}$/.test(hex)) return { ok: false, message: SEARCH_WORDS };
  if (hex === '') return undefined;
  const lower = hex.toLowerCase();
  return {
    ok: true,
    prefix: `0x${lower}`,
    cursor: below(lower.padEnd(40, '0')),
    whole: lower.length === 40,
  };
}

/**
 * A page of entries read for a prefix: the entries that start with it, and whether the matches
 * go on past the page (entries are in address order, so one entry past the prefix ends them).
 */
export function matchesOfPage(
  items: readonly string[],
  prefix: string,
  nextCursor: string | null | undefined,
): { matches: string[]; more: boolean } {
  const matches = items.filter((a) => a.startsWith(prefix));
  return { matches, more: Boolean(nextCursor) && matches.length === items.length };
}
