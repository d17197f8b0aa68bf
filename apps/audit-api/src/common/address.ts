import type { AddressFormat } from '@meridian/networks';
import { getAddress } from 'viem';
import { invalidField } from './audit-errors';

export interface ParsedAddress {
  /** Storage key: lower case for EVM and SUI, as given for TRON (base58 is case-sensitive). */
  readonly key: string;
  /** How the address is shown in answers: EIP-55 for EVM. */
  readonly display: string;
}

const EVM = /^0x[0-9a-fA-F]{40}$/;
const SUI = /^0x[0-9a-fA-F]{1,64}$/;
const TRON = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;

/**
 * Validates an address for the chain's format. A mixed-case EVM address must carry a valid
 * EIP-55 checksum (a typo in one character is otherwise a different, valid-looking address);
 * all-lower or all-upper hex is accepted without one.
 */
export function parseAddress(input: string, format: AddressFormat, field: string): ParsedAddress {
  const value = input.trim();
  if (format === 'evm') {
    if (!EVM.test(value))
      throw invalidField(
        `invalid_${field}`,
        `${field} must be 0x followed by 40 hex digits`,
        field,
      );
    const hex = value.slice(2);
    const mixed = hex !== hex.toLowerCase() && hex !== hex.toUpperCase();
    const checksummed = getAddress(`0x${hex.toLowerCase()}`);
    if (mixed && checksummed !== value) {
      throw invalidField(
        `invalid_${field}_checksum`,
        `${field} has mixed case but an invalid EIP-55 checksum`,
        field,
      );
    }
    return { key: checksummed.toLowerCase(), display: checksummed };
  }
  if (format === 'tron') {
    if (!TRON.test(value))
      throw invalidField(
        `invalid_${field}`,
        `${field} must be a base58 TRON address starting with T`,
        field,
      );
    return { key: value, display: value };
  }
  if (!SUI.test(value))
    throw invalidField(
      `invalid_${field}`,
      `${field} must be 0x followed by up to 64 hex digits`,
      field,
    );
  const padded = `0x${value.slice(2).toLowerCase().padStart(64, '0')}`;
  return { key: padded, display: padded };
}
