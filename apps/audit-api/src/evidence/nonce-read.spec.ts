import { AUDIT_CHAINS } from '@meridian/networks';
import { nonceReadFor } from './wallet-evidence';

describe('nonceReadFor', () => {
  it.each([
    // The spec's method table of network E lacks eth_getTransactionCount; its eth_getProof carries the nonce.
    ['ETH', 'eth_getProof'],
    ['SEPOLIA', 'eth_getProof'],
    ['HOODI', 'eth_getProof'],
    // Networks R and P list eth_getTransactionCount.
    ['POLY', 'eth_getTransactionCount'],
    ['AMOY', 'eth_getTransactionCount'],
    ['OPBNB', 'eth_getTransactionCount'],
    // Not relayed here: read from a plain node, which has both.
    ['BNB', 'eth_getTransactionCount'],
    ['BASE', 'eth_getTransactionCount'],
  ] as const)('%s reads the nonce with %s', (code, method) => {
    expect(nonceReadFor(AUDIT_CHAINS[code])).toBe(method);
  });
});
