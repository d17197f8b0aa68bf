import { parseAbi, parseEther, type Abi, type Address, type Hex } from 'viem';

/**
 * Tokens written by this project after the shapes of real-world contracts (canonical tokens,
 * launch tokens with ordinary anti-bot rules, scam patterns described in published rug pull
 * datasets and honeypot tutorials), from test/fixtures/contracts/RealWorld*.sol. They are not
 * code written by others: that corpus is bench/third-party-corpus.ts. Ground truth: malicious =
 * a buyer can be trapped or robbed today or at one call of an insider (honeypot, blocked sales,
 * a confiscatory fee switch, seizing balances, a power hidden behind a misleading name). Powers
 * held openly by design (a declared mint, a named-address blacklist, a pause for everyone) are a
 * centralisation risk, not malice (docs/adr/0304-audit-malice-and-centralisation.md).
 */
export interface RealWorldToken {
  /** Contract name in test/fixtures/contracts/artifacts.json. */
  readonly contract: string;
  readonly malicious: boolean;
  /** Gets Uniswap V2 liquidity (WETH9 itself has no WETH pool). */
  readonly pool: boolean;
  /** Has `setMarket(pair)`, called after liquidity is added. */
  readonly market: boolean;
  /** `renounceOwnership()` after set-up. */
  readonly renounce: boolean;
  /** What the tokens stands for. */
  readonly pattern: string;
  /** Constructor arguments; absent: `[supply]`. */
  readonly args?: (context: DeployContext) => readonly unknown[];
  /** Run after deployment, before liquidity (e.g. a preset that mints nothing at construction). */
  readonly setUp?: (devnet: DevnetLike, token: Address, supply: bigint) => Promise<void>;
}

export interface DeployContext {
  readonly deployer: Address;
  readonly supply: bigint;
  /** Unix seconds, about the devnet's clock. */
  readonly now: bigint;
}

const t = (
  contract: string,
  malicious: boolean,
  pattern: string,
  options: Partial<Pick<RealWorldToken, 'pool' | 'market' | 'renounce'>> = {},
): RealWorldToken => ({
  contract,
  malicious,
  pattern,
  pool: options.pool ?? true,
  market: options.market ?? false,
  renounce: options.renounce ?? false,
});

export const REAL_WORLD_TOKENS: readonly RealWorldToken[] = [
  t('TetherLikeToken', false, 'USDT: no return values, owner pause, blacklist, issue, capped fee'),
  t('WETH9Like', false, 'WETH9: public withdraw of one’s own ether', { pool: false }),
  t('DaiLike', false, 'Dai: wards instead of owner(), mint by a ward'),
  t('UniLike', false, 'UNI: minter behind a one-year time lock and a 2 % cap'),
  t('MinterPauserToken', false, 'OpenZeppelin minter/pauser preset: roles, a pause for everyone'),
  t('OneTradePerBlockToken', false, 'launch anti-bot: one pool trade per wallet per block', {
    market: true,
  }),
  t('SellCooldownToken', false, 'launch anti-bot: 30 s between a buy and a sell', {
    market: true,
  }),
  t('NoWalletTransferToken', false, 'pool trades only; wallet transfers return false', {
    market: true,
  }),
  t('SilentTransferToken', false, 'pool trades only; wallet transfers return true, move nothing', {
    market: true,
  }),
  t('WhitelistSellToken', true, 'honeypot tutorial: only whitelisted wallets sell', {
    market: true,
  }),
  t('HiddenAdminFeeToken', true, 'no owner(); a stored admin raises the sell fee', {
    market: true,
  }),
  t('ArrayBotListToken', true, 'bot list filled by an array under an innocent name', {
    market: true,
  }),
  t('RenouncedTaxWalletToken', true, 'renounced; the tax wallet keeps a fee switch', {
    market: true,
    renounce: true,
  }),
  t('MaxTxTrapToken', true, 'owner-exempt max transaction that can stop every sale', {
    market: true,
  }),
  // tx.origin and code checks (RealWorldTxOrigin.sol): a real wallet is tx.origin, without code.
  t('OriginSellTrapToken', true, 'honeypot: a sale fails when the seller is tx.origin', {
    market: true,
  }),
  t('CodelessSellTrapToken', true, 'honeypot: a sale fails when the seller has no code', {
    market: true,
  }),
  t('CodelessBuyerTrapToken', true, 'only accounts without code buy; tx.origin cannot sell', {
    market: true,
  }),
  t('OriginExemptFeeToken', true, 'uncapped sell fee, 0 today, the owner exempt by tx.origin', {
    market: true,
  }),
  t('OriginOnlyTradeToken', false, 'launch anti-bot: only tx.origin trades with the pool', {
    market: true,
  }),
  t('ContractSellerBlockToken', false, 'launch anti-bot: contracts cannot sell to the pool', {
    market: true,
  }),
];

/** The slice of the test devnet the deployment needs (test/support/devnet.ts). */
export interface DevnetLike {
  readonly deployer: Address;
  deploy(abi: Abi, bytecode: Hex, args?: readonly unknown[]): Promise<Address>;
  send(to: Address, abi: Abi, functionName: string, args: readonly unknown[]): Promise<void>;
  addLiquidity(token: Address, tokenAmount: bigint, ethAmount: bigint): Promise<Address>;
}

const SET_UP_ABI = parseAbi(['function setMarket(address)', 'function renounceOwnership()']);

/** Deploys one token with `supply`, half of it as liquidity against 10 ETH, as its entry says. */
export async function deployRealWorldToken(
  devnet: DevnetLike,
  token: RealWorldToken,
  artifact: { abi: Abi; bytecode: Hex },
  supply: bigint,
): Promise<Address> {
  const context = {
    deployer: devnet.deployer,
    supply,
    now: BigInt(Math.floor(Date.now() / 1000)),
  };
  const address = await devnet.deploy(
    artifact.abi,
    artifact.bytecode,
    token.args ? token.args(context) : [supply],
  );
  await token.setUp?.(devnet, address, supply);
  if (token.pool) {
    const pair = await devnet.addLiquidity(address, supply / 2n, parseEther('10'));
    if (token.market) await devnet.send(address, SET_UP_ABI, 'setMarket', [pair]);
  }
  if (token.renounce) await devnet.send(address, SET_UP_ABI, 'renounceOwnership', []);
  return address;
}
