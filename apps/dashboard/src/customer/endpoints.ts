import { NETWORKS, NETWORK_KEYS, type Endpoint, type Interface } from '@meridian/networks';
import type { AppConfig } from '../config/config';

export interface EndpointUrl {
  endpoint: Endpoint;
  interface: Interface;
  /** Base to which the access token is appended (gRPC: an address; the token goes in metadata). */
  url: string;
}

export interface NetworkEndpoints {
  key: string;
  display_name: string;
  testnet: boolean;
  endpoints: EndpointUrl[];
  /** Its methods the spec deprecates (still served; network S's two): told on the page. */
  deprecated_methods: string[];
}

const wsOf = (url: string) => url.replace(/^http/, 'ws');

/**
 * Every network with the endpoint URLs the availability table (libs/domain/networks) offers,
 * on the public bases this deployment is configured with; an endpoint without a base is left out.
 */
export function networkEndpoints(
  rpcUrls: AppConfig['PUBLIC_RPC_URLS'],
  grpcAddresses: AppConfig['PUBLIC_GRPC_ADDRESSES'],
): NetworkEndpoints[] {
  return NETWORK_KEYS.map((key) => {
    const network = NETWORKS[key];
    const endpoints: EndpointUrl[] = [];
    for (const [endpoint, interfaces] of Object.entries(network.availability) as Array<
      [Endpoint, readonly Interface[]]
    >) {
      const base = rpcUrls[endpoint];
      for (const iface of interfaces) {
        if (iface === 'grpc') {
          const address = endpoint === 'shared' ? undefined : grpcAddresses[endpoint];
          if (address) endpoints.push({ endpoint, interface: iface, url: address });
        } else if (base) {
          const slashed = base.endsWith('/') ? base : `${base}/`;
          endpoints.push({
            endpoint,
            interface: iface,
            url: iface === 'websocket' ? wsOf(slashed) : slashed,
          });
        }
      }
    }
    return {
      key,
      display_name: network.displayName,
      testnet: network.testnet,
      endpoints,
      deprecated_methods: [...(network.deprecatedMethods ?? [])],
    };
  });
}
