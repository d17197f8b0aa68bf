import { checkEvmAddress } from '@meridian/networks';

/** Entries as typed or pasted: one per line, or separated by commas, semicolons or spaces. */
export const splitEntries = (text: string): string[] =>
  text
    .split(/[\s,;]+/)
    .map((a) => a.trim())
    .filter(Boolean);

export interface CheckedAddresses {
  /** Distinct addresses (any letter case in, lower case out), in the order first typed. */
  valid: string[];
  /**
   * Entries the API refuses, as typed: not a 0x-prefixed 20-byte hex address, or mixed case with
   * a wrong EIP-55 checksum (the API's rule, `checkEvmAddress`; ADR 0403).
   */
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
    const address = checkEvmAddress(entry);
    if (!address.ok) invalid.push(entry);
    else if (seen.has(address.lower)) duplicates += 1;
    else seen.add(address.lower);
  }
  return { valid: [...seen], invalid, duplicates };
}
