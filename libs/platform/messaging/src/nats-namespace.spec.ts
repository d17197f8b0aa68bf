import { NatsNamespace } from './nats-namespace';

describe('NatsNamespace', () => {
  it('prefixes subjects with a dot and names with an underscore', () => {
    const ns = new NatsNamespace('t42');
    expect(ns.subject('chain.block.canonical.v1.eth-mainnet')).toBe(
      't42.chain.block.canonical.v1.eth-mainnet',
    );
    expect(ns.stream('CHAIN')).toBe('t42_CHAIN');
    expect(ns.consumer('delivery-worker-jobs')).toBe('t42_delivery-worker-jobs');
    expect(ns.bucket('billing-balance-state')).toBe('t42_billing-balance-state');
    expect(ns.unprefixSubject('t42.billing.usage.recorded.v1.a')).toBe(
      'billing.usage.recorded.v1.a',
    );
    expect(() => ns.unprefixSubject('other.billing.usage.recorded.v1.a')).toThrow(
      /outside namespace/,
    );
  });

  it('an empty prefix changes nothing', () => {
    const ns = new NatsNamespace('');
    expect(ns.subject('a.b')).toBe('a.b');
    expect(ns.stream('CHAIN')).toBe('CHAIN');
    expect(ns.unprefixSubject('a.b')).toBe('a.b');
  });

  it.each(['a.b', 'a b', 'x*'])('refuses the prefix %j', (prefix) => {
    expect(() => new NatsNamespace(prefix)).toThrow(/invalid NATS_PREFIX/);
  });
});
