import { NETWORKS } from './network.table';
import {
  NETWORK_KEYS,
  type Endpoint,
  type Interface,
  type Network,
  type NetworkKey,
} from './network.types';

const byChainId = new Map<number, Network>();
for (const network of Object.values(NETWORKS)) {
  if (network.chainId !== null) byChainId.set(network.chainId, network);
}

const keySet: ReadonlySet<string> = new Set(NETWORK_KEYS);

/** All networks in table order. */
export const ALL_NETWORKS: readonly Network[] = NETWORK_KEYS.map((key) => NETWORKS[key]);

export function isNetworkKey(value: unknown): value is NetworkKey {
  return typeof value === 'string' && keySet.has(value);
}

export function networkByKey(key: NetworkKey): Network;
export function networkByKey(key: string): Network | undefined;
export function networkByKey(key: string): Network | undefined {
  return isNetworkKey(key) ? NETWORKS[key] : undefined;
}

export function networkByChainId(chainId: number): Network | undefined {
  return byChainId.get(chainId);
}

const resolve = (network: Network | NetworkKey): Network =>
  typeof network === 'string' ? NETWORKS[network] : network;

/** Whether the network relays this method at all (any interface). */
export function isMethodOffered(network: Network | NetworkKey, method: string): boolean {
  return resolve(network).methods.has(method);
}

export function isOffered(
  network: Network | NetworkKey,
  endpoint: Endpoint,
  iface: Interface,
): boolean {
  return resolve(network).availability[endpoint]?.includes(iface) ?? false;
}

/** Networks served at an endpoint over at least one interface. */
export function networksAt(endpoint: Endpoint): readonly Network[] {
  return ALL_NETWORKS.filter((network) => network.availability[endpoint] !== undefined);
}

/** Endpoints at which the network is served over the interface. */
export function endpointsOffering(
  network: Network | NetworkKey,
  iface: Interface,
): readonly Endpoint[] {
  const availability = resolve(network).availability;
  return (Object.keys(availability) as Endpoint[]).filter((endpoint) =>
    availability[endpoint]?.includes(iface),
  );
}
