import { toFunctionSelector } from 'viem';

/** What a function signature found in a token's dispatcher lets its owner do. */
export type Capability =
  | 'erc20'
  | 'ownership'
  | 'renounce'
  | 'take_back_ownership'
  | 'mint'
  | 'blacklist'
  | 'pause'
  | 'fee_setter'
  | 'withdraw'
  | 'balance_setter'
  | 'admin_transfer'
  | 'upgrade';

const SIGNATURES: Record<Capability, readonly string[]> = {
  erc20: [
    'totalSupply()',
    'balanceOf(address)',
    'transfer(address,uint256)',
    'transferFrom(address,address,uint256)',
    'approve(address,uint256)',
    'allowance(address,address)',
    'name()',
    'symbol()',
    'decimals()',
    'increaseAllowance(address,uint256)',
    'decreaseAllowance(address,uint256)',
    'permit(address,address,uint256,uint256,uint8,bytes32,bytes32)',
    'nonces(address)',
    'DOMAIN_SEPARATOR()',
    'eip712Domain()',
    'burn(uint256)',
    'burnFrom(address,uint256)',
    'proxiableUUID()',
    'UPGRADE_INTERFACE_VERSION()',
    'initialize(string,string,uint256,address)',
    'deposit()',
    'delegate(address)',
    'delegates(address)',
    'getCurrentVotes(address)',
  ],
  ownership: [
    'owner()',
    'getOwner()',
    'transferOwnership(address)',
    'pendingOwner()',
    'acceptOwnership()',
    'rely(address)',
    'deny(address)',
    'wards(address)',
    'grantRole(bytes32,address)',
    'revokeRole(bytes32,address)',
    'renounceRole(bytes32,address)',
    'hasRole(bytes32,address)',
    'setMinter(address)',
  ],
  renounce: ['renounceOwnership()'],
  take_back_ownership: [
    'lock(uint256)',
    'unlock()',
    'geUnlockTime()',
    'getUnlockTime()',
    'reclaimOwnership()',
  ],
  mint: [
    'mint(address,uint256)',
    'mint(uint256)',
    'mintTo(address,uint256)',
    'issue(uint256)',
    'mint(address)',
  ],
  blacklist: [
    'blacklist(address)',
    'addToBlacklist(address)',
    'addBlackList(address)',
    'setBlacklist(address,bool)',
    'isBlacklisted(address)',
    'isBlackListed(address)',
    'blacklistAddress(address,bool)',
    'addBot(address)',
    'setBots(address[])',
    'blockBots(address[])',
    'bots(address)',
    'removeFromBlacklist(address)',
    'destroyBlackFunds(address)',
    'setBlacklisted(address,bool)',
    'freeze(address)',
    'addBots(address[])',
    'delBot(address)',
    'setBlacklist(address[],bool)',
    'blacklistMany(address[])',
    // weird-erc20's BlockList (after USDC/USDT): the name says what it does.
    'block(address)',
    'allow(address)',
  ],
  pause: [
    'pause()',
    'unpause()',
    'paused()',
    'setPaused(bool)',
    'setTradingEnabled(bool)',
    'enableTrading()',
    'openTrading()',
    'setTrading(bool)',
    // DSStop (DSToken: MKR, Sai), weird-erc20's Pausable.
    'stop()',
    'start()',
  ],
  fee_setter: [
    'setFee(uint256)',
    'setFees(uint256,uint256)',
    'setTaxFee(uint256)',
    'setSellTax(uint256)',
    'setBuyTax(uint256)',
    'setSellFee(uint256)',
    'setBuyFee(uint256)',
    'setTaxes(uint256,uint256)',
    'updateFees(uint256,uint256)',
    'setMaxTxAmount(uint256)',
    'setMaxWalletSize(uint256)',
    'setLiquidityFeePercent(uint256)',
    'setTaxFeePercent(uint256)',
    'setMaxTxPercent(uint256)',
    'setParams(uint256,uint256)',
  ],
  withdraw: [
    'withdraw()',
    'withdraw(uint256)',
    'withdrawETH()',
    'rescueTokens(address,uint256)',
    'emergencyWithdraw()',
    'withdrawToken(address,uint256)',
    'rescueETH()',
  ],
  balance_setter: [
    'setBalance(address,uint256)',
    'rebase(uint256)',
    'setBalances(address[],uint256[])',
  ],
  admin_transfer: [
    'adminTransfer(address,address,uint256)',
    'forceTransfer(address,address,uint256)',
    'transferFromAny(address,address,uint256)',
  ],
  upgrade: [
    'upgradeTo(address)',
    'upgradeToAndCall(address,bytes)',
    'implementation()',
    'changeAdmin(address)',
    'admin()',
    'deprecate(address)',
  ],
};

/** A function the signature table knows: what it lets its caller do and its parameter types. */
export interface KnownFunction {
  readonly capability: Capability;
  readonly signature: string;
  readonly params: readonly string[];
}

const paramsOf = (signature: string): string[] => {
  const inner = signature.slice(signature.indexOf('(') + 1, -1);
  return inner === '' ? [] : inner.split(',');
};

/** selector (0x + 8 hex) → the known function. */
export const KNOWN_FUNCTIONS: ReadonlyMap<string, KnownFunction> = new Map(
  Object.entries(SIGNATURES).flatMap(([capability, signatures]) =>
    signatures.map(
      (signature) =>
        [
          toFunctionSelector(`function ${signature}`),
          { capability: capability as Capability, signature, params: paramsOf(signature) },
        ] as const,
    ),
  ),
);

/** selector (0x + 8 hex) → capability. */
export const KNOWN_SELECTORS: ReadonlyMap<string, Capability> = new Map(
  [...KNOWN_FUNCTIONS].map(([selector, known]) => [selector, known.capability] as const),
);

/** Selectors never probed as privileged calls: standard, read-only or ownership-changing ones. */
export const NEVER_PROBE: ReadonlySet<Capability> = new Set([
  'erc20',
  'ownership',
  'renounce',
  'take_back_ownership',
  'upgrade',
]);
