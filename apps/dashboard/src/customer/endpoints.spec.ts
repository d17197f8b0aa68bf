import { NETWORKS } from '@meridian/networks';
import { networkEndpoints } from './endpoints';

describe('networkEndpoints', () => {
  const rpc = {
    eu: 'https://eu.example.org/',
    us: 'https://us.example.org',
    asia: 'https://asia.example.org/',
    shared: 'https://shared.example.org/',
  };
  const grpc = { eu: 'eu.example.org:443', us: 'us.example.org:443', asia: 'asia.example.org:443' };
  const all = networkEndpoints(rpc, grpc);
  const of = (key: string) => all.find((n) => n.key === key)!;

  it('offers exactly what the availability table offers, per endpoint and interface', () => {
    for (const network of all) {
      const expected = Object.entries(NETWORKS[network.key as keyof typeof NETWORKS].availability)
        .flatMap(([endpoint, ifaces]) => (ifaces ?? []).map((i) => `${endpoint}/${i}`))
        .sort();
      expect(network.endpoints.map((e) => `${e.endpoint}/${e.interface}`).sort()).toEqual(expected);
    }
  });

  it('builds websocket URLs from the HTTP base and gRPC from the address', () => {
    expect(of('polygon-mainnet').endpoints).toEqual(
      expect.arrayContaining([
        { endpoint: 'us', interface: 'jsonrpc', url: 'https://us.example.org/' },
        { endpoint: 'us', interface: 'websocket', url: 'wss://us.example.org/' },
        { endpoint: 'eu', interface: 'grpc', url: 'eu.example.org:443' },
      ]),
    );
    expect(of('polygon-amoy').endpoints.some((e) => e.endpoint === 'asia')).toBe(false);
    expect(of('sui-mainnet').endpoints).toEqual([
      { endpoint: 'shared', interface: 'jsonrpc', url: 'https://shared.example.org/' },
    ]);
  });

  it("names network S's deprecated methods, and none of another network", () => {
    expect(of('sui-mainnet').deprecated_methods).toEqual([
      'suix_getLatestSuiSystemState',
      'sui_tryMultiGetPastObjects',
    ]);
    expect(of('eth-mainnet').deprecated_methods).toEqual([]);
  });

  it('leaves out endpoints this deployment has no base for', () => {
    const onlyEu = networkEndpoints({ eu: 'http://127.0.0.1:1/' }, {});
    expect(onlyEu.find((n) => n.key === 'eth-mainnet')!.endpoints).toEqual([
      { endpoint: 'eu', interface: 'jsonrpc', url: 'http://127.0.0.1:1/' },
      { endpoint: 'eu', interface: 'websocket', url: 'ws://127.0.0.1:1/' },
    ]);
  });
});
