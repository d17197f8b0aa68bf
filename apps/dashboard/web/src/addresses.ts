import { checkEvmAddress, type EvmAddressCheck } from '@meridian/networks';

/** Entries as typed or pasted: one per line, or separated by commas, semicolons or spaces. */
export const splitEntries = (text: string): string[] =>
  text
    .split(/[\s,;]+/)
    .map((a) => a.trim())
    .filter(Boolean);

/**
 * What the APIs suggest for a mixed-case address with a wrong EIP-55 checksum (the webhook
 * API's and audit-api's wording): one wording for the webhook form and the lists page.
 */
export const checksumSuggestion = (expected: string): string =>
  `checksummed it is ${expected}, or give it all lower case`;

/** A refused entry with a wrong checksum, named in full, with its checksummed form suggested. */
export const checksumMistake = (entry: string, expected: string): string =>
  `"${entry}" has mixed case but a wrong EIP-55 checksum (a typo?): ${checksumSuggestion(expected)}.`;

export interface CheckedAddresses {
  /**
   * Distinct addresses (all lower, all upper or checksummed case in, lower case out), in the order
   * first typed.
   */
  valid: string[];
  /**
   * Entries the API refuses, as typed: not a 0x-prefixed 20-byte hex address, or mixed case with
   * a wrong EIP-55 checksum (the API's rule, `checkEvmAddress`; ADR 0403).
   */
  invalid: string[];
  /** Those of `invalid` that are well formed but for a wrong checksum, each checksummed. */
  wrongChecksum: { entry: string; expected: string }[];
  /** Entries that repeat an address already counted (the API collapses them too). */
  duplicates: number;
}

type EntryCheck = (entry: string) => EvmAddressCheck;

/** What a box of addresses holds, as the API will read it: only valid ones count. */
export function checkAddresses(
  text: string,
  check: EntryCheck = checkEvmAddress,
): CheckedAddresses {
  const seen = new Set<string>();
  const invalid: string[] = [];
  const wrongChecksum: CheckedAddresses['wrongChecksum'] = [];
  let duplicates = 0;
  for (const entry of splitEntries(text)) {
    const address = check(entry);
    if (!address.ok) {
      invalid.push(entry);
      if (address.reason === 'checksum') wrongChecksum.push({ entry, expected: address.expected });
    } else if (seen.has(address.lower)) duplicates += 1;
    else seen.add(address.lower);
  }
  return { valid: [...seen], invalid, wrongChecksum, duplicates };
}

const LOWER_CASE_ADDRESS = /^0x[0-9a-f]{40}$/;

/**
 * `checkAddresses` for one box as it is edited: each entry's check is kept from the last call,
 * so a keystroke in a box of 100,000 addresses checks the one entry it changed, not all of them
 * again (an EIP-55 checksum is a keccak hash: QA measured 0.65 s a keystroke at 100k). Only the
 * last call's entries are kept, so the memory follows the box. `checkEntry` is for tests.
 */
export function addressChecker(
  checkEntry: EntryCheck = checkEvmAddress,
): (text: string) => CheckedAddresses {
  let known = new Map<string, EvmAddressCheck>();
  return (text) => {
    const next = new Map<string, EvmAddressCheck>();
    const checked = checkAddresses(text, (entry) => {
      // The common case, cheaper than a lookup: lower case needs no checksum.
      if (LOWER_CASE_ADDRESS.test(entry)) return { ok: true, lower: entry };
      let result = next.get(entry) ?? known.get(entry);
      if (result === undefined) result = checkEntry(entry);
      next.set(entry, result);
      return result;
    });
    known = next;
    return checked;
  };
}

/**
 * What two boxes hold together, as `checkAddresses` reads their text joined by a line break:
 * a large paste kept out of the textarea is checked once, what is typed beside it on each
 * change. `seen` is `first.valid` as a set, when the caller keeps one.
 */
export function mergeChecked(
  first: CheckedAddresses,
  second: CheckedAddresses,
  seen: ReadonlySet<string> = new Set(first.valid),
): CheckedAddresses {
  const added = second.valid.filter((a) => !seen.has(a));
  return {
    valid: added.length > 0 ? [...first.valid, ...added] : first.valid,
    invalid: [...first.invalid, ...second.invalid],
    wrongChecksum: [...first.wrongChecksum, ...second.wrongChecksum],
    duplicates: first.duplicates + second.duplicates + second.valid.length - added.length,
  };
}

const count = (n: number) => `${n} ${n === 1 ? 'address' : 'addresses'}`;

/**
 * What a change of a list's entries did, in words, from the API's `added` and `removed`: a
 * remove of addresses the list does not hold changes nothing and must say so (QA: no feedback).
 */
export function entriesChangeOutcome(
  kind: 'add' | 'remove' | 'replace',
  asked: number,
  answer: { added: number; removed: number },
): { tone: 'ok' | 'warn'; text: string } {
  if (kind === 'remove') {
    if (answer.removed === 0)
      return {
        tone: 'warn',
        text:
          asked === 1
            ? 'That address is not in this list: nothing was removed.'
            : `None of these ${count(asked)} is in this list: nothing was removed.`,
      };
    const missing = asked - answer.removed;
    return {
      tone: 'ok',
      text: `Removed ${count(answer.removed)}.${missing > 0 ? ` ${count(missing)} ${missing === 1 ? 'was' : 'were'} not in the list.` : ''}`,
    };
  }
  if (kind === 'add') {
    const already = asked - answer.added;
    if (answer.added === 0)
      return {
        tone: 'warn',
        text:
          asked === 1
            ? 'That address is already in this list: nothing was added.'
            : `All ${count(asked)} are already in this list: nothing was added.`,
      };
    return {
      tone: 'ok',
      text: `Added ${count(answer.added)}.${already > 0 ? ` ${count(already)} ${already === 1 ? 'was' : 'were'} already in the list.` : ''}`,
    };
  }
  return {
    tone: 'ok',
    text: `The list now holds these ${count(asked)}: ${answer.added} added, ${answer.removed} removed.`,
  };
}
