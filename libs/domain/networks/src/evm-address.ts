import { getAddress } from 'viem';

/**
 * The one rule for an EVM address a client gives (ADR 0403): `0x` and 40 hex digits; all lower
 * case or all upper case carries no checksum, mixed case is EIP-55's checksum and must be right.
 * A wrong checksum is almost always a typo (one letter's case flipped), so it is refused, as
 * viem's strict `isAddress` and ethers refuse it, never read as some other, unused address.
 */
export const EVM_ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;

export type EvmAddressCheck =
  /** `lower`: how it is stored and compared (its EIP-55 form for display: `evmChecksumOf`). */
  | { readonly ok: true; readonly lower: string }
  /** Not `0x` and 40 hex digits. */
  | { readonly ok: false; readonly reason: 'format' }
  /** Mixed case with a wrong EIP-55 checksum; `expected` is the address checksummed. */
  | { readonly ok: false; readonly reason: 'checksum'; readonly expected: string };

/** The EIP-55 form of a well-formed EVM address given in any case (viem's getAddress). */
export const evmChecksumOf = (address: string): string => getAddress(address.toLowerCase());

/**
 * Checks an EVM address against the rule above; never throws. The checksum (a keccak-256) is
 * computed for mixed case only: a list of 100,000 lower-case addresses costs a regex each, not
 * 1.6 s of hashing.
 */
export function checkEvmAddress(value: string): EvmAddressCheck {
  if (typeof value !== 'string' || !EVM_ADDRESS_PATTERN.test(value))
    return { ok: false, reason: 'format' };
  const hex = value.slice(2);
  const lowerHex = hex.toLowerCase();
  const lower = `0x${lowerHex}`;
  if (hex === lowerHex || hex === hex.toUpperCase()) return { ok: true, lower };
  const checksummed = evmChecksumOf(lower);
  return value === checksummed
    ? { ok: true, lower }
    : { ok: false, reason: 'checksum', expected: checksummed };
}

/** True when `checkEvmAddress` accepts the value. */
export const isEvmAddress = (value: string): boolean => checkEvmAddress(value).ok;
