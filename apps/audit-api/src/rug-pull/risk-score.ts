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
}

/** What owner calls did when simulated from the owner's address. */
export interface PrivilegeFindings {
  readonly mintProven: boolean;
  /** An owner call moved a third party's tokens without their approval. */
  readonly seizeProven: boolean;
  /** An owner call stopped one named holder from transferring. */
  readonly blacklistProven: boolean;
  /** An owner call stopped every holder from transferring. */
  readonly pauseProven: boolean;
}

export const NO_PRIVILEGES: PrivilegeFindings = {
  mintProven: false,
  seizeProven: false,
  blacklistProven: false,
  pauseProven: false,
};

export interface TokenFindings {
  readonly capabilities: ReadonlySet<Capability>;
  /** The contract exposes owner()/getOwner(). */
  readonly hasOwnerFunction: boolean;
  /** owner() answers an address other than zero and the dead address. */
  readonly ownerActive: boolean;
  readonly isProxy: boolean;
  readonly selfdestruct: boolean;
  /** DELEGATECALL outside a proxy's forwarding. */
  readonly externalCall: boolean;
  readonly holdsEth: boolean;
  /** null: no pool with liquidity was found. */
  readonly trade: TradeFindings | null;
  readonly privileges: PrivilegeFindings;
}

type Flag = 0 | 1;
const bit = (value: boolean): Flag => (value ? 1 : 0);

export interface RiskIndicators {
  is_honeypot: Flag;
  cannot_sell_all: Flag;
  cannot_buy: Flag;
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
  has_liquidity_pool: Flag;
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

export function riskIndicators(f: TokenFindings): RiskIndicators {
  const has = (capability: Capability) => f.capabilities.has(capability);
  const privileged = OWNER_GATED.some(has) || Object.values(f.privileges).some(Boolean);
  return {
    is_honeypot: bit(f.trade !== null && f.trade.buyOk && (!f.trade.sellOk || !f.trade.transferOk)),
    cannot_sell_all: bit(f.trade !== null && f.trade.sellOk && !f.trade.sellAllOk),
    cannot_buy: bit(f.trade !== null && !f.trade.buyOk),
    is_mintable: bit(has('mint') || f.privileges.mintProven),
    buy_tax: round4(f.trade?.buyTax ?? null),
    sell_tax: round4(f.trade?.sellTax ?? null),
    transfer_tax: round4(f.trade?.transferTax ?? null),
    hidden_owner: bit(privileged && !f.hasOwnerFunction && !f.isProxy),
    can_take_back_ownership: bit(has('take_back_ownership')),
    owner_change_balance: bit(
      has('balance_setter') || f.privileges.mintProven || f.privileges.seizeProven,
    ),
    transfer_pausable: bit(has('pause') || f.privileges.pauseProven),
    slippage_modifiable: bit(has('fee_setter')),
    is_blacklisted: bit(has('blacklist') || f.privileges.blacklistProven),
    is_proxy: bit(f.isProxy),
    selfdestruct: bit(f.selfdestruct),
    external_call: bit(f.externalCall),
    owner_renounced: bit(f.hasOwnerFunction && !f.ownerActive),
    has_liquidity_pool: bit(f.trade !== null),
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
 * Weights (points, summed, capped at 100), documented in docs/adr/0303-audit-rug-pull-checker.md.
 * Behaviour proven by simulation weighs most; owner powers count fully while someone holds them
 * (an active owner, or privileged code without a visible owner) and at a fifth once renounced.
 */
export const RISK_WEIGHTS = {
  is_honeypot: 80,
  cannot_buy: 40,
  cannot_sell_all: 40,
  approval_abuse: 40,
  owner_change_balance: 30,
  is_mintable: 25,
  is_proxy: 30,
  selfdestruct: 30,
  can_take_back_ownership: 30,
  is_blacklisted: 25,
  transfer_pausable: 20,
  hidden_owner: 20,
  slippage_modifiable: 15,
  external_call: 10,
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
  const held = f.ownerActive || (!f.hasOwnerFunction && !f.isProxy) ? 1 : 0.2;
  const w = RISK_WEIGHTS;
  let points =
    w.is_honeypot * r.is_honeypot +
    w.cannot_buy * r.cannot_buy +
    w.cannot_sell_all * r.cannot_sell_all +
    w.is_proxy * r.is_proxy +
    w.selfdestruct * r.selfdestruct +
    w.external_call * r.external_call +
    w.hidden_owner * r.hidden_owner +
    Math.max(taxPoints(r.buy_tax), taxPoints(r.sell_tax), taxPoints(r.transfer_tax));
  points +=
    held *
    (w.approval_abuse * d.approval_abuse +
      w.owner_change_balance * r.owner_change_balance +
      w.is_mintable * r.is_mintable +
      w.can_take_back_ownership * r.can_take_back_ownership +
      w.is_blacklisted * r.is_blacklisted +
      w.transfer_pausable * r.transfer_pausable +
      w.slippage_modifiable * r.slippage_modifiable +
      w.privilege_withdraw * d.privilege_withdraw);
  return Math.min(100, Math.round(points));
}

export type RiskStatus = 'Low Risk' | 'Medium Risk' | 'High Risk';

export const riskStatus = (score: number): RiskStatus =>
  score >= 50 ? 'High Risk' : score >= 20 ? 'Medium Risk' : 'Low Risk';
