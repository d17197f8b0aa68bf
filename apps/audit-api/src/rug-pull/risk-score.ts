import type { Capability } from './selectors';

/** Result of the buy → transfer → sell simulation through a Uniswap-V2-style pool. */
export interface TradeFindings {
  readonly buyOk: boolean;
  readonly transferOk: boolean;
  readonly sellOk: boolean;
  readonly sellAllOk: boolean;
  /** Fractions in [0, 1]; null when not measurable (e.g. the buy failed). */
  readonly buyTax: number | null;
  readonly sellTax: number | null;
  readonly transferTax: number | null;
  /**
   * The one-call trade's two stand-in wallets (tx.origin with code, no code and not tx.origin)
   * met different trades: the token treats callers apart, and which of them a real wallet (both
   * tx.origin and without code) meets, only a fork trade shows. Until one does, a failed step or
   * a tax seen by one wallet alone counts as a restriction, never as a trap (ADR 0303).
   */
  readonly callerDependent?: boolean;
}

/** Trade points a caller-dependent finding counts at most: a restriction (Medium), not Fraud. */
export const CALLER_DEPENDENT_MAX_POINTS = 40;

/**
 * Where there is no pool: a privileged caller gave tokens to the two stand-in wallets (the one
 * that is tx.origin, with code; one without code, not tx.origin) and each tried to pass them on.
 */
export interface HolderTransfers {
  readonly originOk: boolean;
  readonly codelessOk: boolean;
  /** Holders were stuck until one privileged call, after which they could transfer (a launch switch). */
  readonly opened: boolean;
}

/** What privileged calls did when simulated from the address of a privileged caller. */
export interface PrivilegeFindings {
  readonly mintProven: boolean;
  /** A privileged call moved a third party's tokens without their approval. */
  readonly seizeProven: boolean;
  /** A privileged call stopped one named holder from transferring. */
  readonly blacklistProven: boolean;
  /** A privileged call stopped every holder from transferring. */
  readonly pauseProven: boolean;
  /**
   * After one privileged call a fresh wallet could no longer buy or sell through the pool (or
   * paid a sell tax of half or more), while the caller could still move its own tokens: a
   * switch that traps buyers and lets the insider out.
   */
  readonly sellBlockProven: boolean;
  /** Highest sell tax a fresh wallet paid after one privileged call; null when not measured. */
  readonly maxSellTaxAfterCall: number | null;
  /** A power above was proven through a function whose name does not declare it. */
  readonly hiddenPowerProven: boolean;
}

export const NO_PRIVILEGES: PrivilegeFindings = {
  mintProven: false,
  seizeProven: false,
  blacklistProven: false,
  pauseProven: false,
  sellBlockProven: false,
  maxSellTaxAfterCall: null,
  hiddenPowerProven: false,
};

export interface TokenFindings {
  /**
   * Capabilities by function name. Owner-gated kinds (mint, blacklist, withdraw…) are kept only
   * when a stranger's call is refused: a public `withdraw(uint)` (WETH9) is no privilege.
   */
  readonly capabilities: ReadonlySet<Capability>;
  /** The contract exposes owner()/getOwner(). */
  readonly hasOwnerFunction: boolean;
  /** owner() answers an address other than zero and the dead address. */
  readonly ownerActive: boolean;
  /**
   * Someone (the owner, an admin address the code compares with CALLER, the creator) was shown
   * to hold a power by simulation, or a guarded capability answered their call.
   */
  readonly privilegeHeld: boolean;
  readonly isProxy: boolean;
  readonly selfdestruct: boolean;
  /** DELEGATECALL outside a proxy's forwarding. */
  readonly externalCall: boolean;
  readonly holdsEth: boolean;
  /** null: no pool with liquidity was found. */
  readonly trade: TradeFindings | null;
  /**
   * A pool with liquidity was found (true), the routers answered and hold none (false), or no
   * router is configured for the chain or none answered (null: unknown). Absent: `trade` says it.
   */
  readonly liquidityPool?: boolean | null;
  readonly privileges: PrivilegeFindings;
  /**
   * Measured only without a pool; null or absent: not measured (a pool exists, or no privileged
   * caller could give tokens away).
   */
  readonly holders?: HolderTransfers | null;
}

type Flag = 0 | 1;
const bit = (value: boolean): Flag => (value ? 1 : 0);

export interface RiskIndicators {
  /** null (with cannot_sell_all, cannot_buy): not measured, no pool and nothing the holders showed. */
  is_honeypot: Flag | null;
  cannot_sell_all: Flag | null;
  cannot_buy: Flag | null;
  is_mintable: Flag;
  buy_tax: number | null;
  sell_tax: number | null;
  transfer_tax: number | null;
  hidden_owner: Flag;
  can_take_back_ownership: Flag;
  owner_change_balance: Flag;
  transfer_pausable: Flag;
  slippage_modifiable: Flag;
  is_blacklisted: Flag;
  is_proxy: Flag;
  selfdestruct: Flag;
  external_call: Flag;
  owner_renounced: Flag;
  /** null: no DEX router known for the chain, so whether a pool exists is unknown. */
  has_liquidity_pool: Flag | null;
  /** A privileged call can stop others buying or selling while the caller keeps trading. */
  owner_can_block_sells: Flag;
  /** Highest sell tax a privileged call could set, measured by a trade after it. */
  max_sell_tax_by_owner: number | null;
  /** A power hides behind a function name that does not declare it (e.g. a mint named syncRewards). */
  hidden_power: Flag;
}

export interface RugForensicDetails {
  owner: Flag;
  privilege_withdraw: Flag;
  withdraw_missing: Flag;
  blacklist: Flag;
  selfdestruct: Flag;
  is_proxy: Flag;
  approval_abuse: Flag;
}

const round4 = (value: number | null) =>
  value === null ? null : Math.round(Math.min(1, Math.max(0, value)) * 10_000) / 10_000;

const OWNER_GATED = [
  'mint',
  'blacklist',
  'pause',
  'fee_setter',
  'balance_setter',
  'admin_transfer',
  'withdraw',
] as const;

const CONFISCATORY_TAX = 0.5;

/** What a buyer meets: is_honeypot, cannot_sell_all, cannot_buy (null when nothing was measured). */
interface Exit {
  readonly is_honeypot: Flag | null;
  readonly cannot_sell_all: Flag | null;
  readonly cannot_buy: Flag | null;
  /** The finding depends on which stand-in wallet met it: a restriction, at most 40 points. */
  readonly callerDependent: boolean;
}

/**
 * With a pool the trade (one call, then the fork) says it. Without one no sale or buy can be
 * tried: the holders' transfers say whether tokens once held can move at all. Stuck for both
 * stand-in wallets while the privileged caller gave tokens away is a honeypot (only the insider
 * gets out), unless one privileged call frees them (a launch lock: a restriction, and a pause
 * power); stuck for one wallet only is a restriction, as in the trade; free, or not measured,
 * tells nothing about a sale: unknown (null), as GoPlus leaves a token outside any DEX.
 */
export function exitOf(f: TokenFindings): Exit {
  const t = f.trade;
  if (t !== null) {
    const dependent = t.callerDependent === true;
    return {
      // A honeypot is a token bought that cannot be sold; a wallet-to-wallet transfer that does
      // nothing is not one (it is reported in transfer_tax).
      is_honeypot: bit(t.buyOk && !t.sellOk && !dependent),
      // A sale refused to one stand-in wallet only is a restriction until a fork trade says more.
      cannot_sell_all: bit(t.buyOk && !t.sellAllOk && (t.sellOk || dependent)),
      cannot_buy: bit(!t.buyOk),
      callerDependent: dependent,
    };
  }
  const h = f.holders;
  if (!h || (h.originOk && h.codelessOk))
    return { is_honeypot: null, cannot_sell_all: null, cannot_buy: null, callerDependent: false };
  const stuck = !h.originOk && !h.codelessOk;
  return {
    is_honeypot: bit(stuck && !h.opened),
    cannot_sell_all: bit(!stuck || h.opened),
    cannot_buy: null,
    callerDependent: !stuck,
  };
}

export function riskIndicators(f: TokenFindings): RiskIndicators {
  const has = (capability: Capability) => f.capabilities.has(capability);
  const p = f.privileges;
  const privileged =
    OWNER_GATED.some(has) ||
    p.mintProven ||
    p.seizeProven ||
    p.blacklistProven ||
    p.pauseProven ||
    p.sellBlockProven;
  const raisedTax =
    p.maxSellTaxAfterCall !== null && p.maxSellTaxAfterCall > (f.trade?.sellTax ?? 0) + 0.01;
  const exit = exitOf(f);
  return {
    is_honeypot: exit.is_honeypot,
    cannot_sell_all: exit.cannot_sell_all,
    cannot_buy: exit.cannot_buy,
    is_mintable: bit(has('mint') || p.mintProven),
    buy_tax: round4(f.trade?.buyTax ?? null),
    sell_tax: round4(f.trade?.sellTax ?? null),
    transfer_tax: round4(f.trade?.transferTax ?? null),
    hidden_owner: bit(privileged && f.privilegeHeld && !f.hasOwnerFunction && !f.isProxy),
    can_take_back_ownership: bit(has('take_back_ownership')),
    // Minting changes the supply, not a holder's balance: it is is_mintable alone.
    owner_change_balance: bit(has('balance_setter') || p.seizeProven),
    transfer_pausable: bit(has('pause') || p.pauseProven || f.holders?.opened === true),
    slippage_modifiable: bit(has('fee_setter') || raisedTax),
    is_blacklisted: bit(has('blacklist') || p.blacklistProven),
    is_proxy: bit(f.isProxy),
    selfdestruct: bit(f.selfdestruct),
    external_call: bit(f.externalCall),
    owner_renounced: bit(f.hasOwnerFunction && !f.ownerActive),
    has_liquidity_pool: f.liquidityPool === null ? null : bit(f.liquidityPool ?? f.trade !== null),
    owner_can_block_sells: bit(
      p.sellBlockProven || (p.maxSellTaxAfterCall ?? 0) >= CONFISCATORY_TAX,
    ),
    max_sell_tax_by_owner: round4(p.maxSellTaxAfterCall),
    hidden_power: bit(p.hiddenPowerProven),
  };
}

export function rugForensicDetails(f: TokenFindings, r: RiskIndicators): RugForensicDetails {
  return {
    owner: bit(f.ownerActive),
    privilege_withdraw: bit(f.capabilities.has('withdraw')),
    withdraw_missing: bit(f.holdsEth && !f.capabilities.has('withdraw')),
    blacklist: r.is_blacklisted,
    selfdestruct: r.selfdestruct,
    is_proxy: r.is_proxy,
    approval_abuse: bit(f.capabilities.has('admin_transfer') || f.privileges.seizeProven),
  };
}

/**
 * Two scores (docs/adr/0304-audit-malice-and-centralisation.md). Malice: what traps or robs a
 * buyer today or at one call of an insider — a failed sale, a confiscatory tax, a switch that
 * stops others selling while the insider still can, seizing balances, a power hidden behind a
 * misleading name. Centralisation: powers held openly by design (a declared mint, a blacklist
 * of named addresses, a pause that stops everyone, an upgradeable proxy, a fee setter), which
 * canonical tokens (USDT, Dai, UNI, OpenZeppelin presets) have too. `risk_score`, `risk_status`
 * and the Fraud verdict follow malice; centralisation is reported beside it.
 */
export const MALICE_WEIGHTS = {
  // A proven honeypot (a sale refused to every wallet a token can tell apart, confirmed on a fork
  // where one runs) is the worst finding there is: the full score on its own, so no dormant
  // switch (owner_can_block_sells + hidden_power) and no token Fraud only through its creator
  // scores above it (QA M2, ADR 0304 amendment).
  is_honeypot: 100,
  cannot_buy: 40,
  cannot_sell_all: 40,
  approval_abuse: 40,
  owner_can_block_sells: 60,
  hidden_power: 50,
  selfdestruct: 30,
  external_call: 10,
} as const;

export const CENTRALISATION_WEIGHTS = {
  owner_change_balance: 30,
  is_mintable: 25,
  is_proxy: 30,
  can_take_back_ownership: 30,
  is_blacklisted: 25,
  transfer_pausable: 20,
  hidden_owner: 20,
  slippage_modifiable: 15,
  privilege_withdraw: 10,
} as const;

export function taxPoints(tax: number | null): number {
  if (tax === null) return 0;
  if (tax >= 0.5) return 60;
  if (tax >= 0.2) return 35;
  if (tax >= 0.1) return 20;
  if (tax >= 0.05) return 10;
  return 0;
}

export function riskScore(f: TokenFindings, r: RiskIndicators, d: RugForensicDetails): number {
  const w = MALICE_WEIGHTS;
  const trade =
    w.is_honeypot * (r.is_honeypot ?? 0) +
    w.cannot_buy * (r.cannot_buy ?? 0) +
    w.cannot_sell_all * (r.cannot_sell_all ?? 0) +
    Math.max(taxPoints(r.buy_tax), taxPoints(r.sell_tax), taxPoints(r.transfer_tax));
  const points =
    (exitOf(f).callerDependent ? Math.min(trade, CALLER_DEPENDENT_MAX_POINTS) : trade) +
    w.approval_abuse * d.approval_abuse +
    w.owner_can_block_sells * r.owner_can_block_sells +
    w.hidden_power * r.hidden_power +
    w.selfdestruct * r.selfdestruct +
    w.external_call * r.external_call;
  return Math.min(100, Math.round(points));
}

/**
 * Powers count fully while someone holds them (an active owner, or a caller the simulation
 * proved privileged) and at a fifth once nobody does (ownership renounced, no other admin).
 */
export function centralisationScore(
  f: TokenFindings,
  r: RiskIndicators,
  d: RugForensicDetails,
): number {
  const held = f.ownerActive || f.privilegeHeld ? 1 : 0.2;
  const w = CENTRALISATION_WEIGHTS;
  const points =
    w.is_proxy * r.is_proxy +
    held *
      (w.owner_change_balance * r.owner_change_balance +
        w.is_mintable * r.is_mintable +
        w.can_take_back_ownership * r.can_take_back_ownership +
        w.is_blacklisted * r.is_blacklisted +
        w.transfer_pausable * r.transfer_pausable +
        w.hidden_owner * r.hidden_owner +
        w.slippage_modifiable * r.slippage_modifiable +
        w.privilege_withdraw * d.privilege_withdraw);
  return Math.min(100, Math.round(points));
}

export type RiskStatus = 'Low Risk' | 'Medium Risk' | 'High Risk';

/**
 * The token's answer in one rule: `status` from the fraud probability (Fraud at 0.5), and
 * `risk_score` / `risk_status` agreeing with it. The score is the malice score of the token's own
 * findings; a token Fraud through something else (its creator's honeypot or flags, a label of
 * its own; ADR 0302) shows its probability as its score instead (at least 50: High Risk), so a
 * Fraud is never "Low Risk" and a High Risk never Not Fraud (ADR 0304, amendment).
 */
export function tokenVerdict(
  malice: number,
  probability: number,
): { status: 'Fraud' | 'Not Fraud'; riskScore: number; riskStatus: RiskStatus } {
  const fraud = probability >= 0.5;
  const riskScore =
    fraud && malice < 50 ? Math.max(50, Math.min(100, Math.round(probability * 100))) : malice;
  return { status: fraud ? 'Fraud' : 'Not Fraud', riskScore, riskStatus: riskStatus(riskScore) };
}

export const riskStatus = (score: number): RiskStatus =>
  score >= 50 ? 'High Risk' : score >= 20 ? 'Medium Risk' : 'Low Risk';

export type CentralisationLabel = 'Low' | 'Medium' | 'High';

export const centralisationLabel = (score: number): CentralisationLabel =>
  score >= 50 ? 'High' : score >= 20 ? 'Medium' : 'Low';
