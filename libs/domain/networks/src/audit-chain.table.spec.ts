import {
  AUDIT_CHAINS,
  AUDIT_CHAIN_CODES,
  auditChainForNetwork,
  parseAuditChainCode,
} from './audit-chain.table';
import { isNetworkKey } from './network-lookup';
import { NETWORK_KEYS } from './network.types';

describe('audit chain codes', () => {
  it.each([
    ['ETH', 'ETH', 'eth-mainnet'],
    ['eth', 'ETH', 'eth-mainnet'],
    ['BNB', 'BNB', null],
    ['bsc', 'BNB', null],
    ['BSC', 'BNB', null],
    ['Poly', 'POLY', 'polygon-mainnet'],
    ['BASE', 'BASE', null],
    ['tron', 'TRON', null],
    ['OPBNB', 'OPBNB', 'opbnb-mainnet'],
    ['opbnb_testnet', 'OPBNB_TESTNET', 'opbnb-testnet'],
    ['AMOY', 'AMOY', 'polygon-amoy'],
    ['sepolia', 'SEPOLIA', 'eth-sepolia'],
    ['HOODI', 'HOODI', 'eth-hoodi'],
    ['SUI', 'SUI', 'sui-mainnet'],
    [' eth ', 'ETH', 'eth-mainnet'],
  ] as const)('%p → %s relayed as %p', (input, code, relayed) => {
    const chain = parseAuditChainCode(input);
    expect(chain?.code).toBe(code);
    expect(chain?.relayedNetwork).toBe(relayed);
  });

  it.each(['', 'ETHEREUM', 'MATIC', 'SOL', 'eth-mainnet'])('rejects %p', (input) => {
    expect(parseAuditChainCode(input)).toBeUndefined();
  });

  it('every relayed network has exactly one audit code', () => {
    for (const key of NETWORK_KEYS) {
      const codes = AUDIT_CHAIN_CODES.filter((code) => AUDIT_CHAINS[code].relayedNetwork === key);
      expect(codes).toHaveLength(1);
      expect(auditChainForNetwork(key)?.code).toBe(codes[0]);
    }
  });

  it('relayed networks are real network keys', () => {
    for (const code of AUDIT_CHAIN_CODES) {
      const relayed = AUDIT_CHAINS[code].relayedNetwork;
      if (relayed !== null) expect(isNetworkKey(relayed)).toBe(true);
    }
  });
});
