import type { NetworkKey } from './network.types';

/**
 * Chain codes of the address-audit API (COMPAT "Address audit"): the reference service's codes
 * ETH, BNB, POLY, BASE, TRON, plus one code for each network this service relays. Only codes
 * with a relayed network can gather on-chain evidence through the gateway; the others are
 * scored from label packs and sanction records alone.
 */
export const AUDIT_CHAIN_CODES = [
  'ETH',
  'BNB',
  'POLY',
  'BASE',
  'TRON',
  'OPBNB',
  'OPBNB_TESTNET',
  'AMOY',
  'SEPOLIA',
  'HOODI',
  'SUI',
] as const;

export type AuditChainCode = (typeof AUDIT_CHAIN_CODES)[number];

export type AddressFormat = 'evm' | 'tron' | 'sui';

export interface AuditChain {
  readonly code: AuditChainCode;
  /** Other spellings accepted on input (case-insensitive), e.g. BSC for BNB. */
  readonly aliases: readonly string[];
  /** The network relayed here for on-chain evidence; null when this service does not relay it. */
  readonly relayedNetwork: NetworkKey | null;
  readonly addressFormat: AddressFormat;
  /** EVM chain id when the chain is EVM, for label packs keyed by chain id. */
  readonly evmChainId: number | null;
}

const chain = (
  code: AuditChainCode,
  relayedNetwork: NetworkKey | null,
  addressFormat: AddressFormat,
  evmChainId: number | null,
  aliases: readonly string[] = [],
): AuditChain => Object.freeze({ code, aliases, relayedNetwork, addressFormat, evmChainId });

export const AUDIT_CHAINS: Readonly<Record<AuditChainCode, AuditChain>> = Object.freeze({
  ETH: chain('ETH', 'eth-mainnet', 'evm', 1),
  // BNB Smart Chain itself is not relayed here (only its rollup, opBNB, is).
  BNB: chain('BNB', null, 'evm', 56, ['BSC']),
  POLY: chain('POLY', 'polygon-mainnet', 'evm', 137),
  BASE: chain('BASE', null, 'evm', 8453),
  TRON: chain('TRON', null, 'tron', null),
  OPBNB: chain('OPBNB', 'opbnb-mainnet', 'evm', 204),
  OPBNB_TESTNET: chain('OPBNB_TESTNET', 'opbnb-testnet', 'evm', 5611),
  AMOY: chain('AMOY', 'polygon-amoy', 'evm', 80002),
  SEPOLIA: chain('SEPOLIA', 'eth-sepolia', 'evm', 11_155_111),
  HOODI: chain('HOODI', 'eth-hoodi', 'evm', 560_048),
  SUI: chain('SUI', 'sui-mainnet', 'sui', null),
});

const byInput = new Map<string, AuditChain>();
for (const entry of Object.values(AUDIT_CHAINS)) {
  byInput.set(entry.code, entry);
  for (const alias of entry.aliases) byInput.set(alias, entry);
}

/** Accepts any case and aliases (bsc → BNB); undefined for an unknown code (400 at the edge). */
export function parseAuditChainCode(input: string): AuditChain | undefined {
  return byInput.get(input.trim().toUpperCase());
}

/** The audit chain code under which a relayed network is audited. */
export function auditChainForNetwork(network: NetworkKey): AuditChain | undefined {
  return Object.values(AUDIT_CHAINS).find((entry) => entry.relayedNetwork === network);
}
