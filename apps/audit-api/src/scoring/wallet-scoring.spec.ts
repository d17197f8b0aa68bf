import type { StoredLabel } from '../labels/labels.repository';
import { NO_CHAIN_FLAGS, forensicFlags } from './forensic-flags';
import { toWireForensicDetails, WALLET_FORENSIC_COUNTERS } from './forensic-fields';
import {
  formatProbability,
  hasHistory,
  walletExperience,
  walletProbability,
  walletVerdict,
  type WalletFeatures,
} from './wallet-score';

const label = (
  pack: string,
  category: StoredLabel['category'],
  extra: Record<string, unknown> | null = null,
): StoredLabel => ({
  pack,
  chain: 'ETH',
  address: '0xa',
  category,
  name: null,
  url: null,
  sourceDate: null,
  extra,
});

describe('forensicFlags', () => {
  it.each([
    [
      'sanctioned',
      [label('ofac-eth-ultrasoundmoney', 'sanctioned')],
      NO_CHAIN_FLAGS,
      { sanctioned: 1 },
      ['ofac-eth-ultrasoundmoney'],
    ],
    [
      'mixer pool',
      [label('etherscan-tornado-cash', 'mixer')],
      NO_CHAIN_FLAGS,
      { mixer: 1, money_laundering: 1 },
      ['etherscan-tornado-cash'],
    ],
    [
      'phishing',
      [label('scamsniffer', 'phishing')],
      NO_CHAIN_FLAGS,
      { phishing_activities: 1 },
      ['scamsniffer'],
    ],
    [
      'exploit',
      [label('forta-malicious-labels', 'stealing')],
      NO_CHAIN_FLAGS,
      { stealing_attack: 1 },
      ['forta-malicious-labels'],
    ],
    [
      'stablecoin blocked',
      [label('etherscan-blocked', 'blacklisted')],
      NO_CHAIN_FLAGS,
      { blacklist_doubt: 1 },
      ['etherscan-blocked'],
    ],
    [
      'malicious creator',
      [label('forta-malicious-contracts', 'malicious_creator', { contracts: ['0x1', '0x2'] })],
      NO_CHAIN_FLAGS,
      { number_of_malicious_contracts_created: 2 },
      ['forta-malicious-contracts'],
    ],
    [
      'mixer deposit on chain',
      [],
      { ...NO_CHAIN_FLAGS, mixerInteractions: 1 },
      { mixer: 1, money_laundering: 1 },
      ['onchain'],
    ],
    [
      'created a flagged contract',
      [],
      { ...NO_CHAIN_FLAGS, maliciousContractsCreated: ['0x9'] },
      { number_of_malicious_contracts_created: 1 },
      ['onchain'],
    ],
    [
      'impersonates a canonical token',
      [],
      { ...NO_CHAIN_FLAGS, impersonatesToken: true },
      { fake_token: 1 },
      ['onchain'],
    ],
    [
      'created two tokens the rug pull checker stored as honeypots: one flag, both counted',
      [],
      { ...NO_CHAIN_FLAGS, honeypotsCreated: ['0xa', '0xb'] },
      { honeypot_related_address: 1, number_of_malicious_contracts_created: 2 },
      ['rug-pull-checker'],
    ],
    [
      'a honeypot it created that a pack labels too is counted once',
      [],
      { ...NO_CHAIN_FLAGS, maliciousContractsCreated: ['0xa'], honeypotsCreated: ['0xa'] },
      { honeypot_related_address: 1, number_of_malicious_contracts_created: 1 },
      ['onchain', 'rug-pull-checker'],
    ],
    [
      'canonical token itself is no flag',
      [label('uniswap-default-token-list', 'canonical_token')],
      NO_CHAIN_FLAGS,
      {},
      [],
    ],
    ['nothing', [], NO_CHAIN_FLAGS, {}, []],
  ] as const)('%s', (_name, labels, chain, expected, sources) => {
    const result = forensicFlags(
      labels as unknown as StoredLabel[],
      chain as typeof NO_CHAIN_FLAGS,
    );
    const set = Object.fromEntries(Object.entries(result.counts).filter(([, v]) => v > 0));
    expect(set).toEqual(expected);
    expect(result.sources).toEqual(sources);
    expect(result.flagged).toBe(Object.keys(expected).length > 0);
  });

  it('writes every counter as a decimal string, in the spec order, with data_source', () => {
    const wire = toWireForensicDetails(
      forensicFlags([label('a', 'sanctioned'), label('b', 'phishing')], NO_CHAIN_FLAGS).counts,
      ['a', 'b'],
    );
    expect(Object.keys(wire)).toHaveLength(WALLET_FORENSIC_COUNTERS.length + 1);
    expect(Object.keys(wire).indexOf('data_source')).toBe(
      Object.keys(wire).indexOf('fake_standard_interface') + 1,
    );
    expect(wire['sanctioned']).toBe('1');
    expect(wire['data_source']).toBe('a,b');
    expect(Object.values(wire).every((v) => typeof v === 'string')).toBe(true);
  });
});

describe('wallet scoring', () => {
  const base: WalletFeatures = {
    isContract: false,
    txCount: 120,
    transferCount: 40,
    ageDays: 900,
    flaggedCounterparties: 0,
    counterparties: 30,
    contractsCreated: 0,
  };
  it.each([
    ['old busy wallet', base, 'Not Fraud', [0, 0.05]],
    [
      'young wallet',
      { ...base, txCount: 3, transferCount: 0, ageDays: 1 },
      'Not Fraud',
      [0.05, 0.15],
    ],
    [
      'one flagged counterparty of 30',
      { ...base, flaggedCounterparties: 1 },
      'Not Fraud',
      [0.03, 0.3],
    ],
    [
      'most counterparties flagged',
      {
        ...base,
        txCount: 4,
        transferCount: 4,
        ageDays: 2,
        flaggedCounterparties: 3,
        counterparties: 4,
      },
      'Fraud',
      [0.5, 1],
    ],
    [
      'no history',
      { ...base, txCount: 0, transferCount: 0, ageDays: null, counterparties: 0 },
      'New Address',
      [0, 0.1],
    ],
  ] as const)('%s → %s', (_name, features, status, [lo, hi]) => {
    const verdict = walletVerdict(false, features);
    expect(verdict.status).toBe(status);
    expect(verdict.probability).toBeGreaterThanOrEqual(lo);
    expect(verdict.probability).toBeLessThanOrEqual(hi);
  });

  // QA: 3,412 native transfers received (nonce 0, no token transfer) were "New Address", "New".
  describe('an address that only received (nonce 0) is not new', () => {
    const none: WalletFeatures = {
      ...base,
      txCount: 0,
      transferCount: 0,
      ageDays: null,
      counterparties: 0,
    };
    it.each([
      ['a native balance', { ...none, holdsBalance: true }],
      ['an incoming token transfer', { ...none, transferCount: 1, counterparties: 1 }],
      ['code (a contract)', { ...none, isContract: true }],
    ] as const)('%s is history: Not Fraud, experience Beginner', (_name, features) => {
      expect(hasHistory(features)).toBe(true);
      expect(walletVerdict(false, features).status).toBe('Not Fraud');
      expect(walletExperience(features, true)).toBe('Beginner');
    });
    it('nothing at all, balance zero, is still New Address and New (Unknown without a node)', () => {
      const empty = { ...none, holdsBalance: false };
      expect(hasHistory(empty)).toBe(false);
      expect(walletVerdict(false, empty).status).toBe('New Address');
      expect(walletExperience(empty, true)).toBe('New');
      expect(walletExperience(empty, false)).toBe('Unknown');
    });
    it('experience still grows with sent transactions and age', () => {
      expect(walletExperience(base, true)).toBe('Experienced');
      expect(walletExperience({ ...base, txCount: 50 }, true)).toBe('Intermediate');
      expect(walletExperience({ ...base, ageDays: 10 }, true)).toBe('Beginner');
    });
  });

  it('any flag forces Fraud with probability 1, even without history', () => {
    expect(walletVerdict(true, { ...base, txCount: 0, transferCount: 0 })).toEqual({
      status: 'Fraud',
      probability: 1,
    });
  });

  it('stays in [0, 1] and is monotone in exposure', () => {
    let previous = 0;
    for (let n = 0; n <= 10; n += 1) {
      const p = walletProbability({ ...base, flaggedCounterparties: n, counterparties: 10 });
      expect(p).toBeGreaterThanOrEqual(previous);
      expect(p).toBeLessThan(1);
      previous = p;
    }
  });

  it.each([
    [1, '1.0000000000'],
    [0, '0.0000000000'],
    [0.123456789012, '0.1234567890'],
    [1.5, '1.0000000000'],
    [Number.NaN, '0.0000000000'],
  ])('formats %p as %s', (p, text) => expect(formatProbability(p)).toBe(text));
});
