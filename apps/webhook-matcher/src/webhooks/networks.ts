import { DomainError, quoteInput } from '@meridian/errors';
import { NETWORK_KEYS, type NetworkKey } from '@meridian/networks';
import { refusedAt } from '@meridian/webhooks';

export const WEBHOOK_CHAINS = ['ethereum', 'polygon', 'opbnb'] as const;
export type WebhookChain = (typeof WEBHOOK_CHAINS)[number];

/** Webhooks watch EVM networks; the chain is the network's family name (COMPAT network keys). */
const CHAIN_OF: Partial<Record<NetworkKey, WebhookChain>> = {
  'eth-mainnet': 'ethereum',
  'eth-sepolia': 'ethereum',
  'eth-hoodi': 'ethereum',
  'polygon-mainnet': 'polygon',
  'polygon-amoy': 'polygon',
  'opbnb-mainnet': 'opbnb',
  'opbnb-testnet': 'opbnb',
};

/** The network keys a webhook may watch (every EVM key of COMPAT; not sui-mainnet). */
export const WEBHOOK_NETWORKS = Object.keys(CHAIN_OF) as [NetworkKey, ...NetworkKey[]];

/**
 * The networks webhooks are served on here: those of WEBHOOK_NETWORKS the deployment indexes
 * (config NETWORKS, chain-indexer's list; keys webhooks do not support, sui-mainnet, left out).
 */
export function servedWebhookNetworks(indexed: readonly string[]): NetworkKey[] {
  return WEBHOOK_NETWORKS.filter((network) => indexed.includes(network));
}

const served = (networks: readonly string[]) =>
  networks.length > 0 ? networks.join(', ') : 'none: this deployment indexes no network';

/**
 * `{chain, network}` of a create body: network required, one webhooks support and the
 * deployment indexes (`served`), chain optional but consistent.
 */
export function chainAndNetwork(
  chain: string | undefined,
  network: string,
  servedNetworks: readonly NetworkKey[],
): { chain: string; network: string } {
  const expected = CHAIN_OF[network as NetworkKey];
  if (expected === undefined)
    throw new DomainError(
      'unsupported_network',
      'invalid',
      (NETWORK_KEYS as readonly string[]).includes(network)
        ? `webhooks are not offered on ${network}`
        : `unknown network ${quoteInput(network)}; one of ${served(servedNetworks)}`,
      { details: refusedAt('body.network') },
    );
  if (chain !== undefined && chain !== expected)
    throw new DomainError(
      'invalid_chain',
      'invalid',
      `network ${network} is on chain ${expected}`,
      { details: refusedAt('body.chain') },
    );
  checkNetworkServed(network, servedNetworks);
  return { chain: expected, network };
}

/**
 * A webhook on a network the deployment does not index would never fire: 400
 * `network_not_indexed` naming the networks served (`networks` in the body too).
 */
export function checkNetworkServed(network: string, servedNetworks: readonly NetworkKey[]): void {
  if (!(servedNetworks as readonly string[]).includes(network))
    throw new DomainError(
      'network_not_indexed',
      'invalid',
      `network ${network} is not indexed by this deployment, so its webhooks would never fire; ` +
        `webhooks are served on ${served(servedNetworks)}`,
      { details: { ...refusedAt('body.network'), networks: [...servedNetworks] } },
    );
}
