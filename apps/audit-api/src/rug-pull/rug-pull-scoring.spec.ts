import { analyzeBytecode } from './bytecode';
import {
  NO_PRIVILEGES,
  riskIndicators,
  riskScore,
  riskStatus,
  rugForensicDetails,
  taxPoints,
  type TokenFindings,
} from './risk-score';
import { KNOWN_SELECTORS } from './selectors';

describe('analyzeBytecode', () => {
  it.each([
    // PUSH4 a9059cbb EQ; SELFDESTRUCT
    ['selector and selfdestruct', '0x63a9059cbb14ff', ['0xa9059cbb'], true, false],
    // PUSH2 0xf4ff hides both bytes as data; then DELEGATECALL
    ['push data is not code', '0x61f4fff4', [], false, true],
    // PUSH32 containing ff then STOP
    ['PUSH32 payload skipped', `0x7f${'ff'.repeat(32)}00`, [], false, false],
    // code + CBOR metadata (a2 … 0x0003) holding 0xff
    ['metadata stripped', '0x0063deadbeefa2ffff0003', ['0xdeadbeef'], false, false],
  ])('%s', (_name, code, selectors, selfdestruct, delegatecall) => {
    const facts = analyzeBytecode(code);
    expect(facts.selectors).toEqual(selectors);
    expect(facts.hasSelfdestruct).toBe(selfdestruct);
    expect(facts.hasDelegatecall).toBe(delegatecall);
  });

  it('knows the usual privileged selectors', () => {
    expect(KNOWN_SELECTORS.get('0x40c10f19')).toBe('mint'); // mint(address,uint256)
    expect(KNOWN_SELECTORS.get('0x8456cb59')).toBe('pause'); // pause()
    expect(KNOWN_SELECTORS.get('0xa9059cbb')).toBe('erc20'); // transfer
    expect(KNOWN_SELECTORS.get('0xf9f92be4')).toBe('blacklist'); // blacklist(address)
  });
});

const clean: TokenFindings = {
  capabilities: new Set(['erc20']),
  hasOwnerFunction: false,
  ownerActive: false,
  isProxy: false,
  selfdestruct: false,
  externalCall: false,
  holdsEth: false,
  trade: {
    buyOk: true,
    transferOk: true,
    sellOk: true,
    sellAllOk: true,
    buyTax: 0,
    sellTax: 0,
    transferTax: 0,
  },
  privileges: NO_PRIVILEGES,
};
const owned = { ...clean, hasOwnerFunction: true, ownerActive: true };

describe('risk score', () => {
  it.each([
    ['clean', clean, 0, 'Low Risk'],
    ['no pool at all', { ...clean, trade: null }, 0, 'Low Risk'],
    [
      'honeypot',
      { ...owned, trade: { ...clean.trade!, sellOk: false, sellAllOk: false, sellTax: null } },
      80,
      'High Risk',
    ],
    ['cannot buy', { ...clean, trade: { ...clean.trade!, buyOk: false } }, 40, 'Medium Risk'],
    [
      'cannot sell all',
      { ...clean, trade: { ...clean.trade!, sellAllOk: false } },
      40,
      'Medium Risk',
    ],
    [
      'hidden mint proven, owner active',
      { ...owned, privileges: { ...NO_PRIVILEGES, mintProven: true } },
      55,
      'High Risk',
    ],
    [
      'mint selector, owner renounced',
      { ...owned, ownerActive: false, capabilities: new Set(['erc20', 'mint'] as const) },
      5,
      'Low Risk',
    ],
    [
      'blacklist, owner active',
      { ...owned, capabilities: new Set(['erc20', 'blacklist'] as const) },
      25,
      'Medium Risk',
    ],
    [
      'pausable without a visible owner (hidden owner)',
      { ...clean, capabilities: new Set(['erc20', 'pause'] as const) },
      40,
      'Medium Risk',
    ],
    [
      '30 % sell tax, settable',
      {
        ...owned,
        capabilities: new Set(['erc20', 'fee_setter'] as const),
        trade: { ...clean.trade!, sellTax: 0.3 },
      },
      50,
      'High Risk',
    ],
    [
      '3 % fixed tax',
      { ...clean, trade: { ...clean.trade!, sellTax: 0.03, buyTax: 0.03 } },
      0,
      'Low Risk',
    ],
    ['proxy', { ...owned, isProxy: true }, 30, 'Medium Risk'],
    ['selfdestruct', { ...clean, selfdestruct: true }, 30, 'Medium Risk'],
    [
      'owner seizes balances',
      { ...owned, privileges: { ...NO_PRIVILEGES, seizeProven: true } },
      70,
      'High Risk',
    ],
    [
      'everything',
      {
        ...owned,
        isProxy: true,
        selfdestruct: true,
        privileges: {
          mintProven: true,
          seizeProven: true,
          blacklistProven: true,
          pauseProven: true,
        },
      },
      100,
      'High Risk',
    ],
  ] as const)('%s → %d (%s)', (_name, findings, score, status) => {
    const f = findings as TokenFindings;
    const indicators = riskIndicators(f);
    const forensic = rugForensicDetails(f, indicators);
    expect(riskScore(f, indicators, forensic)).toBe(score);
    expect(riskStatus(score)).toBe(status);
  });

  it.each([
    [null, 0],
    [0.04, 0],
    [0.05, 10],
    [0.1, 20],
    [0.3, 35],
    [0.5, 60],
    [0.99, 60],
  ])('tax %p → %d points', (tax, points) => expect(taxPoints(tax)).toBe(points));

  it('fills forensic details from the findings', () => {
    const f: TokenFindings = {
      ...owned,
      holdsEth: true,
      capabilities: new Set(['erc20', 'admin_transfer'] as const),
    };
    expect(rugForensicDetails(f, riskIndicators(f))).toEqual({
      owner: 1,
      privilege_withdraw: 0,
      withdraw_missing: 1,
      blacklist: 0,
      selfdestruct: 0,
      is_proxy: 0,
      approval_abuse: 1,
    });
  });
});
