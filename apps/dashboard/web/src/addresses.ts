/** Entries as typed or pasted: one per line, or separated by commas, semicolons or spaces. */
export const splitEntries = (text: string): string[] =>
  text
    .split(/[\s,;]+/)
    .map((a) => a.trim())
    .filter(Boolean);

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export interface CheckedAddresses {
  /** Distinct addresses (any letter case in, lower case out), in the order first typed. */
  valid: string[];
  /** Entries that are not a 0x-prefixed 20-byte hex address, as typed. */
  invalid: string[];
  /** Entries that repeat an address already counted (the API collapses them too). */
  duplicates: number;
}

/** What a box of addresses holds, as the API will read it: only valid ones count. */
export function checkAddresses(text: string): CheckedAddresses {
  const seen = new Set<string>();
  const invalid: string[] = [];
  let duplicates = 0;
  for (const entry of splitEntries(text)) {
    if (!ADDRESS.test(entry)) invalid.push(entry);
    else if (seen.has(entry.toLowerCase())) duplicates += 1;
    else seen.add(entry.toLowerCase());
  }
  return { valid: [...seen], invalid, duplicates };
}
