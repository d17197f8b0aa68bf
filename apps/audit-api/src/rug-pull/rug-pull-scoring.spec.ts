import { configSchema, DEFAULT_ROUTERS } from '../config/config';
import { analyzeBytecode } from './bytecode';
import {
  centralisationLabel,
  centralisationScore,
  NO_PRIVILEGES,
  riskIndicators,
  riskScore,
  riskStatus,
  rugForensicDetails,
  taxPoints,
  tokenVerdict,
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
    ['metadata stripped', '0x0063deadbeef14a2ffff0003', ['0xdeadbeef'], false, false],
    // the dispatcher's binary search (DUP1 PUSH4 GT) and Vyper's (PUSH4 DUP2 XOR) are selectors
    [
      'binary search and XOR',
      '0x8063aaaaaaaa1163bbbbbbbb8118',
      ['0xaaaaaaaa', '0xbbbbbbbb'],
      false,
      false,
    ],
    // PUSH4 40c10f19 PUSH1 0xe0 SHL DUP2 MSTORE: calldata of another contract's mint, no selector
    ['a call argument is no selector', '0x6340c10f1960e01b8152', [], false, false],
    // INVALID, then a creation code (PUSH1 0x80 PUSH1 0x40 MSTORE …) holding a dispatcher and 0xff
    [
      'embedded creation code is data',
      '0x8063aaaaaaaa14fe60806040528063bbbbbbbb14ff',
      ['0xaaaaaaaa'],
      false,
      false,
    ],
  ])('%s', (_name, code, selectors, selfdestruct, delegatecall) => {
    const facts = analyzeBytecode(code);
    expect(facts.selectors).toEqual(selectors);
    expect(facts.hasSelfdestruct).toBe(selfdestruct);
    expect(facts.hasDelegatecall).toBe(delegatecall);
  });

  it("reads no mint in Uniswap V2's router and factory, which call and deploy pairs that mint (QA L3)", () => {
    const runtime = (path: string): string => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const artifact = require(path) as { evm: { deployedBytecode: { object: string } | string } };
      const code = artifact.evm.deployedBytecode;
      return `0x${(typeof code === 'string' ? code : code.object).replace(/^0x/, '')}`;
    };
    const router = analyzeBytecode(runtime('@uniswap/v2-periphery/build/UniswapV2Router02.json'));
    const factory = analyzeBytecode(runtime('@uniswap/v2-core/build/UniswapV2Factory.json'));
    const pair = analyzeBytecode(runtime('@uniswap/v2-core/build/UniswapV2Pair.json'));
    const kinds = (selectors: string[]) => new Set(selectors.map((s) => KNOWN_SELECTORS.get(s)));
    expect(kinds(router.selectors).has('mint')).toBe(false);
    expect(kinds(factory.selectors).has('mint')).toBe(false);
    // Their own functions are still read: the router's swaps, the factory's createPair.
    expect(router.selectors).toContain('0x38ed1739'); // swapExactTokensForTokens
    expect(factory.selectors).toContain('0xc9c65396'); // createPair(address,address)
    // The pair does have mint(address) in its dispatcher.
    expect(pair.selectors).toContain('0x6a627842');
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
  privilegeHeld: false,
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
const owned = { ...clean, hasOwnerFunction: true, ownerActive: true, privilegeHeld: true };
const noPool: TokenFindings = { ...owned, trade: null };

const scored = (findings: TokenFindings) => {
  const indicators = riskIndicators(findings);
  const forensic = rugForensicDetails(findings, indicators);
  return {
    indicators,
    malice: riskScore(findings, indicators, forensic),
    centralisation: centralisationScore(findings, indicators, forensic),
  };
};

describe('risk score: malice and centralisation apart', () => {
  it.each([
    ['clean', clean, 0, 0],
    ['no pool at all', { ...clean, trade: null }, 0, 0],
    [
      'honeypot',
      { ...owned, trade: { ...clean.trade!, sellOk: false, sellAllOk: false, sellTax: null } },
      100,
      0,
    ],
    [
      'a wallet transfer that does nothing is no honeypot when the sale works',
      { ...clean, trade: { ...clean.trade!, transferOk: false, transferTax: null } },
      0,
      0,
    ],
    ['cannot buy', { ...clean, trade: { ...clean.trade!, buyOk: false } }, 40, 0],
    ['cannot sell all', { ...clean, trade: { ...clean.trade!, sellAllOk: false } }, 40, 0],
    [
      'declared mint, owner active: centralisation only, counted once',
      { ...owned, capabilities: new Set(['erc20', 'mint'] as const) },
      0,
      25,
    ],
    [
      'mint proven behind a misleading name: malice',
      {
        ...owned,
        privileges: { ...NO_PRIVILEGES, mintProven: true, hiddenPowerProven: true },
      },
      50,
      25,
    ],
    [
      'mint selector, owner renounced',
      {
        ...owned,
        ownerActive: false,
        privilegeHeld: false,
        capabilities: new Set(['erc20', 'mint'] as const),
      },
      0,
      5,
    ],
    [
      'declared blacklist of named holders (USDT-style)',
      { ...owned, capabilities: new Set(['erc20', 'blacklist'] as const) },
      0,
      25,
    ],
    [
      'a pause that stops others while the owner still sells',
      {
        ...owned,
        capabilities: new Set(['erc20', 'pause'] as const),
        privileges: { ...NO_PRIVILEGES, pauseProven: true, sellBlockProven: true },
      },
      60,
      20,
    ],
    [
      'pausable with an admin but no owner() (hidden owner)',
      { ...clean, privilegeHeld: true, capabilities: new Set(['erc20', 'pause'] as const) },
      0,
      40,
    ],
    [
      '30 % sell tax, owner can raise it to 99 %',
      {
        ...owned,
        capabilities: new Set(['erc20', 'fee_setter'] as const),
        trade: { ...clean.trade!, sellTax: 0.3 },
        privileges: { ...NO_PRIVILEGES, maxSellTaxAfterCall: 0.99 },
      },
      95,
      15,
    ],
    [
      'a fee setter capped at a small fee (USDT setParams)',
      {
        ...owned,
        capabilities: new Set(['erc20', 'fee_setter'] as const),
        privileges: { ...NO_PRIVILEGES, maxSellTaxAfterCall: 0.002 },
      },
      0,
      15,
    ],
    ['3 % fixed tax', { ...clean, trade: { ...clean.trade!, sellTax: 0.03, buyTax: 0.03 } }, 0, 0],
    ['proxy', { ...owned, isProxy: true }, 0, 30],
    ['selfdestruct', { ...clean, selfdestruct: true }, 30, 0],
    [
      'owner seizes balances',
      { ...owned, privileges: { ...NO_PRIVILEGES, seizeProven: true } },
      40,
      30,
    ],
  ] as const)('%s', (_name, findings, malice, centralisation) => {
    const result = scored(findings as TokenFindings);
    expect([result.malice, result.centralisation]).toEqual([malice, centralisation]);
  });

  it('a sale refused to one stand-in wallet only is a restriction (Medium), not a honeypot, until a fork trade shows more', () => {
    const refusedToOne = {
      ...clean,
      trade: { ...clean.trade!, sellOk: false, sellAllOk: false, sellTax: null },
    };
    const trap = scored(refusedToOne);
    expect(trap.indicators).toMatchObject({ is_honeypot: 1, cannot_sell_all: 0 });
    expect(riskStatus(trap.malice)).toBe('High Risk');
    const dependent = scored({
      ...refusedToOne,
      trade: { ...refusedToOne.trade, callerDependent: true },
    });
    expect(dependent.indicators).toMatchObject({ is_honeypot: 0, cannot_sell_all: 1 });
    expect(dependent.malice).toBe(40);
    expect(riskStatus(dependent.malice)).toBe('Medium Risk');
  });

  describe('without a pool: what the holders given tokens could do with them', () => {
    const noPool = { ...owned, trade: null };
    it.each([
      // [name, holders, is_honeypot, cannot_sell_all, transfer_pausable, malice]
      ['not measured (no caller could give tokens away)', null, null, null, 0, 0],
      [
        'both stand-in wallets passed tokens on: a sale is unknown',
        [true, true, false],
        null,
        null,
        0,
        0,
      ],
      ['both stuck, only the insider moves tokens: honeypot', [false, false, false], 1, 0, 0, 100],
      ['both stuck until one privileged call (a launch lock)', [false, false, true], 0, 1, 1, 40],
      ['stuck for one stand-in wallet only: a restriction', [true, false, false], 0, 1, 0, 40],
    ] as const)('%s', (_name, holders, honeypot, sellAll, pausable, malice) => {
      const result = scored({
        ...noPool,
        holders: holders && {
          originOk: holders[0],
          codelessOk: holders[1],
          opened: holders[2],
        },
      });
      expect(result.indicators).toMatchObject({
        is_honeypot: honeypot,
        cannot_sell_all: sellAll,
        cannot_buy: null,
        transfer_pausable: pausable,
        has_liquidity_pool: 0,
      });
      expect(result.malice).toBe(malice);
    });
  });

  it('a live trap never scores below the same trap dormant, nor below a token of its creator (QA M2)', () => {
    const switchFound = {
      ...NO_PRIVILEGES,
      sellBlockProven: true,
      hiddenPowerProven: true,
    };
    const dormant = scored({ ...owned, privileges: switchFound });
    const liveTrade = { ...clean.trade!, sellOk: false, sellAllOk: false, sellTax: null };
    // Armed, whether or not the probe could still show the switch: never lower, never fewer powers.
    for (const privileges of [switchFound, NO_PRIVILEGES]) {
      const live = scored({ ...owned, trade: liveTrade, privileges });
      expect(live.malice).toBeGreaterThanOrEqual(dormant.malice);
      expect(live.malice).toBe(100);
    }
    // A proven honeypot, whoever made it, ranks at least with a clean token of its creator (Fraud
    // through the creator: probability 1).
    const honeypot = scored({ ...owned, trade: liveTrade });
    const honeypotVerdict = tokenVerdict(honeypot.malice, 1 - (1 - honeypot.malice / 100) * 0.9);
    expect(honeypotVerdict.riskScore).toBeGreaterThanOrEqual(tokenVerdict(0, 1).riskScore);
  });

  it('a tax one stand-in wallet alone pays counts at most as a restriction', () => {
    const taxed = { ...clean, trade: { ...clean.trade!, sellTax: 0.95 } };
    expect(scored(taxed).malice).toBe(60);
    const dependent = scored({ ...taxed, trade: { ...taxed.trade, callerDependent: true } });
    expect(dependent.indicators.sell_tax).toBe(0.95);
    expect(dependent.malice).toBe(40);
  });

  it('a proven mint is is_mintable, not owner_change_balance (one power, counted once)', () => {
    const { indicators } = scored({
      ...owned,
      privileges: { ...NO_PRIVILEGES, mintProven: true },
    });
    expect([indicators.is_mintable, indicators.owner_change_balance]).toEqual([1, 0]);
  });

  it("a fee raised above today's tax is slippage_modifiable; a raise to half or more can block sells", () => {
    const { indicators } = scored({
      ...owned,
      privileges: { ...NO_PRIVILEGES, maxSellTaxAfterCall: 0.99 },
    });
    expect(indicators.slippage_modifiable).toBe(1);
    expect(indicators.owner_can_block_sells).toBe(1);
    expect(indicators.max_sell_tax_by_owner).toBe(0.99);
  });

  it.each([
    [0, 'Low Risk', 'Low'],
    [19, 'Low Risk', 'Low'],
    [20, 'Medium Risk', 'Medium'],
    [50, 'High Risk', 'High'],
  ] as const)('score %d → %s / %s', (score, status, label) => {
    expect(riskStatus(score)).toBe(status);
    expect(centralisationLabel(score)).toBe(label);
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

  it('has_liquidity_pool: 1 found, 0 when the routers hold none, null when no router is known', () => {
    expect(scored(clean).indicators.has_liquidity_pool).toBe(1);
    expect(scored({ ...noPool, liquidityPool: false }).indicators.has_liquidity_pool).toBe(0);
    // No router for the network (QA: opBNB answered 0 where nothing was known).
    const unknown = scored({ ...noPool, liquidityPool: null });
    expect(unknown.indicators.has_liquidity_pool).toBeNull();
    expect(unknown.indicators.is_honeypot).toBeNull();
  });

  it('opBNB has a default router (PancakeSwap V2), as ETH, BNB, POLY and BASE', () => {
    // AUDIT_DEX_ROUTERS unset, as on the local stack.
    const routers = configSchema.shape.AUDIT_DEX_ROUTERS.parse(undefined);
    expect(routers['OPBNB']).toEqual(['0x8cFe327CEc66d1C090Dd72bd0FF11d690C33a2Eb']);
    expect(Object.keys(DEFAULT_ROUTERS).sort()).toEqual(['BASE', 'BNB', 'ETH', 'OPBNB', 'POLY']);
  });

  it.each([
    // [malice, probability] → status, risk_score, risk_status
    [0, 0.04, 'Not Fraud', 0, 'Low Risk'],
    [60, 0.62, 'Fraud', 60, 'High Risk'],
    [45, 0.49, 'Not Fraud', 45, 'Medium Risk'],
    // Fraud through the creator or a label (QA: Fraud 1.0 with risk_score 0, Low Risk).
    [0, 1, 'Fraud', 100, 'High Risk'],
    [45, 0.52, 'Fraud', 52, 'High Risk'],
  ] as const)(
    'malice %d, probability %p: %s, %d, %s (score and status agree)',
    (malice, probability, status, score, label) => {
      expect(tokenVerdict(malice, probability)).toEqual({
        status,
        riskScore: score,
        riskStatus: label,
      });
    },
  );
});
