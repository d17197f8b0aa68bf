import { createHash } from 'node:crypto';
import { DomainError } from '@meridian/errors';
import { checkEvmAddress, evmChecksumOf, type AddressFormat } from '@meridian/networks';
import { createBase58check } from '@scure/base';
import { invalidField } from './audit-errors';

export interface ParsedAddress {
  /** Storage key: lower case for EVM and SUI, as given for TRON (base58 is case-sensitive). */
  readonly key: string;
  /** How the address is shown in answers: EIP-55 for EVM. */
  readonly display: string;
}

const SUI = /^0x[0-9a-fA-F]{64}$/;
const TRON = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;

/** TRON's base58check: payload + the first 4 bytes of sha256(sha256(payload)). */
const tronBase58check = createBase58check(
  (data: Uint8Array) => new Uint8Array(createHash('sha256').update(data).digest()),
);
/** A TRON account address: version byte 0x41 and the 20-byte account id. */
const TRON_VERSION = 0x41;
const TRON_PAYLOAD_BYTES = 21;

/** The address as the answer shows it: EIP-55 for EVM (also for addresses read on chain). */
export const evmDisplay = evmChecksumOf;

/** The base58check payload, or null when the checksum does not match. */
function tronPayloadOf(value: string): Uint8Array | null {
  try {
    return tronBase58check.decode(value);
  } catch {
    return null;
  }
}

/**
 * Validates an address for the chain's format, strictly: what is refused here would otherwise be
 * checked (and a daily check spent) as a different, valid-looking address.
 *
 * - Surrounding whitespace is refused, not trimmed (README "Addresses").
 * - EVM: a mixed-case address must carry a valid EIP-55 checksum (refused with the address
 *   checksummed, `expected`, as the webhook API does); all-lower or all-upper hex has none to check (`checkEvmAddress` of @meridian/networks, the rule webhooks share; ADR 0403).
 * - TRON: base58check, 25 bytes (version 0x41, 20-byte id, 4-byte double-sha256 checksum); a
 *   wrong checksum is `invalid_<field>_checksum`, like EVM's; another version byte or length is
 *   `invalid_<field>`.
 * - SUI: the full 32 bytes, 0x + 64 hex digits (what Sui wallets, explorers and nodes show); no
 *   short form, so a 20-byte EVM address sent with network SUI is refused, not zero-padded.
 */
export function parseAddress(input: string, format: AddressFormat, field: string): ParsedAddress {
  if (input !== input.trim())
    throw invalidField(
      `invalid_${field}`,
      `${field} must not have leading or trailing whitespace`,
      field,
    );
  const value = input;
  if (format === 'evm') {
    const evm = checkEvmAddress(value);
    if (!evm.ok && evm.reason === 'format')
      throw invalidField(
        `invalid_${field}`,
        `${field} must be 0x followed by 40 hex digits`,
        field,
      );
    // As the webhook API answers it (ADR 0403): the checksummed form named and in `expected`.
    if (!evm.ok)
      throw new DomainError(
        `invalid_${field}_checksum`,
        'invalid',
        `${field} has mixed case but an invalid EIP-55 checksum (a typo?); ` +
          `checksummed it is ${evm.expected}, or give it all lower case`,
        { details: { field, expected: evm.expected } },
      );
    return { key: evm.lower, display: evmChecksumOf(evm.lower) };
  }
  if (format === 'tron') {
    if (!TRON.test(value))
      throw invalidField(
        `invalid_${field}`,
        `${field} must be a base58 TRON address starting with T`,
        field,
      );
    const payload = tronPayloadOf(value);
    if (!payload)
      throw invalidField(
        `invalid_${field}_checksum`,
        `${field} has an invalid base58check checksum`,
        field,
      );
    if (payload.length !== TRON_PAYLOAD_BYTES || payload[0] !== TRON_VERSION)
      throw invalidField(
        `invalid_${field}`,
        `${field} is not a TRON account address (version byte 0x41, 20 bytes)`,
        field,
      );
    return { key: value, display: value };
  }
  if (!SUI.test(value))
    throw invalidField(
      `invalid_${field}`,
      `${field} must be 0x followed by 64 hex digits (a 32-byte SUI address)`,
      field,
    );
  const lower = value.toLowerCase();
  return { key: lower, display: lower };
}
