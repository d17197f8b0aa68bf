import { networkLabel } from './format';

describe('networkLabel (QA: "Polygon PoS Mainnet" on Node access, polygon-mainnet elsewhere)', () => {
  it('names a network by the networks table, webhook deliveries by what they are', () => {
    expect(networkLabel('polygon-mainnet')).toBe('Polygon PoS Mainnet');
    expect(networkLabel('eth-mainnet')).toBe('Ethereum Mainnet');
    expect(networkLabel('webhooks')).toBe('Webhook deliveries');
    expect(networkLabel('unknown-net')).toBe('unknown-net');
    expect(networkLabel(undefined)).toBe('');
  });
});
