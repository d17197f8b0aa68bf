import { DomainError, quoteInput } from '@meridian/errors';
import { NETWORK_KEYS } from '@meridian/networks';

export const WEBHOOK_CHAINS = ['ethereum', 'polygon', 'opbnb'] as const;
export type WebhookChain = (typeof WEBHOOK_CHAINS)[number];

/** Webhooks watch EVM networks; the chain is the network's family name (COMPAT network keys). */
const CHAIN_OF: Record<string, WebhookChain> = {
  'eth-mainnet': 'ethereum',
  'eth-sepolia': 'ethereum',
  'eth-hoodi': 'ethereum',
  'polygon-mainnet': 'polygon',
  'polygon-amoy': 'polygon',
  'opbnb-mainnet': 'opbnb',
  'opbnb-testnet': 'opbnb',
};

/** The network keys a webhook may watch (every EVM key of COMPAT; not sui-mainnet). */
export const WEBHOOK_NETWORKS = Object.keys(CHAIN_OF) as [string, ...string[]];

/** `{chain, network}` of a create body: network required, chain optional but consistent. */
export function chainAndNetwork(
  chain: string | undefined,
  network: string,
): { chain: string; network: string } {
  const expected = CHAIN_OF[network];
  if (expected === undefined)
    throw new DomainError(
      'unsupported_network',
      'invalid',
      (NETWORK_KEYS as readonly string[]).includes(network)
        ? `webhooks are not offered on ${network}`
        : `unknown network ${quoteInput(network)}; one of ${Object.keys(CHAIN_OF).join(', ')}`,
      { details: { path: 'network' } },
    );
  if (chain !== undefined && chain !== expected)
    throw new DomainError(
      'invalid_chain',
      'invalid',
      `network ${network} is on chain ${expected}`,
      {
        details: { path: 'chain' },
      },
    );
  return { chain: expected, network };
}
