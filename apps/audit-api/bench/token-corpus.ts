/**
 * Generated token contracts for the rug pull benchmark: one template (OpenZeppelin ERC20 +
 * Ownable) with feature blocks switched on or off, so each variant is a distinct contract whose
 * ground truth is known. Malicious = a buyer can be trapped or robbed today or at one call of
 * the owner: honeypot, blocked buys or full sells, seizing balances, a pause that stops others
 * while the owner still trades, a power behind a misleading name (hidden mint, hidden
 * blacklist), selfdestruct, a tax of 10 % or more, or a tax the owner can raise. A declared
 * `mint` or a `blacklist` of named addresses is a centralisation risk that canonical tokens
 * (USDT, Dai, OpenZeppelin presets) share, not malice (ADR 0304): Mint1/2 and Black1/2 were
 * labelled malicious before that decision.
 */
export type Feature =
  | { kind: 'honeypot' }
  | { kind: 'cannotBuy' }
  | { kind: 'cannotSellAll' }
  | { kind: 'fixedTax'; percent: number }
  | { kind: 'settableTax'; percent: number; setter: string }
  | { kind: 'mint'; fn: string }
  | { kind: 'seize'; fn: string }
  | { kind: 'blacklist'; fn: string }
  | { kind: 'pause'; fn: string }
  | { kind: 'selfdestruct'; fn: string }
  | { kind: 'burnable' }
  | { kind: 'metadata' }
  | { kind: 'marketingWallet' };

export interface TokenVariant {
  readonly name: string;
  readonly features: readonly Feature[];
  /** Ownership renounced after liquidity is added: owner powers are gone. */
  readonly renounce: boolean;
  readonly malicious: boolean;
}

function block(feature: Feature): { state: string; functions: string; hook: string } {
  switch (feature.kind) {
    case 'honeypot':
      return {
        state: '',
        functions: '',
        hook: 'if (to == market && market != address(0) && from != owner()) revert("TRANSFER_FAILED");',
      };
    case 'cannotBuy':
      return {
        state: '',
        functions: '',
        hook: 'if (from == market && market != address(0) && to != owner()) revert("NO_BUY");',
      };
    case 'cannotSellAll':
      return {
        state: '',
        functions: '',
        hook: 'if (to == market && market != address(0) && from != owner()) require(value < balanceOf(from), "KEEP_SOME");',
      };
    case 'fixedTax':
      return { state: '', functions: '', hook: tax(String(feature.percent)) };
    case 'settableTax':
      return {
        state: `uint256 public fee = ${feature.percent};`,
        functions: `function ${feature.setter}(uint256 percent) external onlyOwner { fee = percent; }`,
        hook: tax('fee'),
      };
    case 'mint':
      return {
        state: '',
        functions: `function ${feature.fn}(address account, uint256 amount) external onlyOwner { _mint(account, amount); }`,
        hook: '',
      };
    case 'seize':
      return {
        state: '',
        functions: `function ${feature.fn}(address account, uint256 amount) external onlyOwner { _burn(account, amount); }`,
        hook: '',
      };
    case 'blacklist':
      return {
        state: 'mapping(address => bool) public blocked;',
        functions: `function ${feature.fn}(address account) external onlyOwner { blocked[account] = true; }`,
        hook: 'require(!blocked[from], "BLOCKED");',
      };
    case 'pause':
      return {
        state: 'bool public halted;',
        functions: `function ${feature.fn}() external onlyOwner { halted = true; }`,
        hook: 'require(!halted || from == owner() || from == address(0), "HALTED");',
      };
    case 'selfdestruct':
      return {
        state: '',
        functions: `function ${feature.fn}() external onlyOwner { selfdestruct(payable(owner())); }`,
        hook: '',
      };
    case 'burnable':
      return {
        state: '',
        functions: 'function burn(uint256 amount) external { _burn(msg.sender, amount); }',
        hook: '',
      };
    case 'metadata':
      return {
        state: 'string public metadata;',
        functions:
          'function setMetadata(string calldata uri) external onlyOwner { metadata = uri; }',
        hook: '',
      };
    case 'marketingWallet':
      return {
        state: 'address public marketingWallet;',
        functions:
          'function setMarketingWallet(address wallet) external onlyOwner { marketingWallet = wallet; }',
        hook: '',
      };
  }
}

const tax = (rate: string) =>
  `if (to == market && market != address(0) && from != owner() && from != address(0)) { uint256 cut = (value * ${rate}) / 100; super._update(from, owner(), cut); value -= cut; }`;

export function sourceOf(variant: TokenVariant): string {
  const parts = variant.features.map(block);
  return `// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
contract ${variant.name} is ERC20, Ownable {
    address public market;
    ${parts.map((p) => p.state).join('\n    ')}
    constructor(uint256 supply) ERC20("${variant.name} Token", "${variant.name.toUpperCase().slice(0, 6)}") Ownable(msg.sender) { _mint(msg.sender, supply); }
    function setMarket(address pair) external onlyOwner { market = pair; }
    ${parts.map((p) => p.functions).join('\n    ')}
    function _update(address from, address to, uint256 value) internal override {
        ${parts.map((p) => p.hook).join('\n        ')}
        super._update(from, to, value);
    }
}
`;
}

const v = (
  name: string,
  malicious: boolean,
  features: Feature[],
  renounce = false,
): TokenVariant => ({ name, features, renounce, malicious });

/** 47 variants: 26 benign, 21 malicious. */
export const TOKEN_VARIANTS: readonly TokenVariant[] = [
  v('Plain1', false, []),
  v('Plain2', false, [{ kind: 'burnable' }]),
  v('Plain3', false, [{ kind: 'metadata' }]),
  v('Plain4', false, [{ kind: 'marketingWallet' }]),
  v('Plain5', false, [{ kind: 'burnable' }, { kind: 'metadata' }]),
  v('Plain6', false, [], true),
  v('Plain7', false, [{ kind: 'burnable' }], true),
  v('Plain8', false, [{ kind: 'metadata' }, { kind: 'marketingWallet' }]),
  v('Tax1', false, [{ kind: 'fixedTax', percent: 1 }]),
  v('Tax2', false, [{ kind: 'fixedTax', percent: 2 }]),
  v('Tax3', false, [{ kind: 'fixedTax', percent: 3 }, { kind: 'burnable' }]),
  v('Tax4', false, [{ kind: 'fixedTax', percent: 4 }]),
  v('RenMint', false, [{ kind: 'mint', fn: 'mint' }], true),
  v('RenBlack', false, [{ kind: 'blacklist', fn: 'blacklist' }], true),
  v('RenPause', false, [{ kind: 'pause', fn: 'pause' }], true),
  v('RenHidden', false, [{ kind: 'mint', fn: 'syncRewards' }], true),
  v('RenTax', false, [{ kind: 'settableTax', percent: 2, setter: 'setSellFee' }], true),
  v('RenSeize', false, [{ kind: 'seize', fn: 'adminBurn' }], true),
  v('RenHalt', false, [{ kind: 'pause', fn: 'haltTrading' }], true),
  v('Plain9', false, [{ kind: 'burnable' }, { kind: 'marketingWallet' }]),
  v('Plain10', false, [{ kind: 'fixedTax', percent: 2 }, { kind: 'metadata' }]),
  v('Plain11', false, [{ kind: 'burnable' }], true),
  v('Honey1', true, [{ kind: 'honeypot' }]),
  v('Honey2', true, [{ kind: 'honeypot' }, { kind: 'burnable' }]),
  v('Honey3', true, [{ kind: 'honeypot' }, { kind: 'metadata' }]),
  v('NoBuy', true, [{ kind: 'cannotBuy' }]),
  v('KeepSome1', true, [{ kind: 'cannotSellAll' }]),
  v('KeepSome2', true, [{ kind: 'cannotSellAll' }, { kind: 'burnable' }]),
  v('Mint1', false, [{ kind: 'mint', fn: 'mint' }]),
  v('Mint2', false, [{ kind: 'mint', fn: 'mint' }, { kind: 'burnable' }]),
  v('Hidden1', true, [{ kind: 'mint', fn: 'syncRewards' }]),
  v('Hidden2', true, [{ kind: 'mint', fn: 'rebaseTo' }]),
  v('Hidden3', true, [{ kind: 'mint', fn: 'distribute' }]),
  v('Black1', false, [{ kind: 'blacklist', fn: 'blacklist' }]),
  v('Black2', false, [{ kind: 'blacklist', fn: 'addBot' }]),
  v('Black3', true, [{ kind: 'blacklist', fn: 'restrict' }]),
  v('Black4', true, [{ kind: 'blacklist', fn: 'setGuard' }]),
  v('Pause1', true, [{ kind: 'pause', fn: 'pause' }]),
  v('Pause2', true, [{ kind: 'pause', fn: 'haltTrading' }]),
  v('BigTax1', true, [{ kind: 'fixedTax', percent: 15 }]),
  v('BigTax2', true, [{ kind: 'fixedTax', percent: 25 }]),
  v('BigTax3', true, [{ kind: 'fixedTax', percent: 60 }]),
  v('SetTax1', true, [{ kind: 'settableTax', percent: 30, setter: 'setSellFee' }]),
  v('SetTax2', true, [{ kind: 'settableTax', percent: 0, setter: 'updateLaunchFee' }]),
  v('Seize1', true, [{ kind: 'seize', fn: 'clean' }]),
  v('Seize2', true, [{ kind: 'seize', fn: 'adminBurn' }]),
  v('Kill1', true, [{ kind: 'selfdestruct', fn: 'kill' }]),
];
