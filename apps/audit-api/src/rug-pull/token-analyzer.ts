import {
  BaseError,
  concatHex,
  ContractFunctionRevertedError,
  decodeFunctionResult,
  encodeAbiParameters,
  encodeFunctionData,
  ExecutionRevertedError,
  getAddress,
  getContractAddress,
  parseAbi,
  RpcRequestError,
  zeroAddress,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { analyzeBytecode } from './bytecode';
import { readProxy } from './proxy';
import {
  type HolderTransfers,
  type PrivilegeFindings,
  type TokenFindings,
  type TradeFindings,
} from './risk-score';
import { KNOWN_FUNCTIONS, KNOWN_SELECTORS, NEVER_PROBE, type Capability } from './selectors';
import probeArtifacts from './simulator/token-probe.artifact.json';

const PROBE = probeArtifacts.TokenProbe as { abi: Abi; deployedBytecode: Hex };
/**
 * Unused addresses the simulation runs from: nobody holds keys to them and no state exists there.
 * PROBE_ADDRESS holds the probe's code and is the `from` of the trade calls, so the wallet that
 * trades is tx.origin, as a real wallet is; PROBE_CALLER is a plain account.
 */
const PROBE_ADDRESS = '0x00000000000000000000000000000000a0d17001' as Address;
const PROBE_CALLER = '0x00000000000000000000000000000000a0d17002' as Address;
const FRESH_RECIPIENT = '0x00000000000000000000000000000000a0d17003' as Address;
/** A caller with no role at all: what it may call is public. */
const STRANGER = '0x00000000000000000000000000000000a0d17004' as Address;
/** Where a privileged call names a holder; TokenProbe writes its fresh holder's address there. */
const HOLDER_PLACEHOLDER = '0x00000000000000000000000000000000a0d1700f' as Address;
const DEAD = new Set([
  '0x0000000000000000000000000000000000000000',
  '0x000000000000000000000000000000000000dead',
]);
const IGNORED_PUSH4 = new Set(['0xffffffff', '0x4e487b71', '0x08c379a0', '0x00000000']);
const MAX_PROBED = 32;
const MAX_CALLERS = 4;
/** Values tried for a lone uint argument: a rate of 99 % in percent, per mille and basis points. */
const RATE_VALUES = [99n, 990n, 9_900n] as const;

const OWNER_ABI = parseAbi([
  'function owner() view returns (address)',
  'function getOwner() view returns (address)',
]);
const ROUTER_ABI = parseAbi([
  'function factory() view returns (address)',
  'function WETH() view returns (address)',
]);
const FACTORY_ABI = parseAbi(['function getPair(address, address) view returns (address)']);
const PAIR_ABI = parseAbi([
  'function getReserves() view returns (uint112, uint112, uint32)',
  'function token0() view returns (address)',
]);
const META_ABI = parseAbi(['function symbol() view returns (string)']);
const ERC20_READS = parseAbi([
  'function totalSupply() view returns (uint256)',
  'function balanceOf(address) view returns (uint256)',
]);

export interface TokenAnalysis {
  readonly findings: TokenFindings;
  readonly creator: { readonly address: string; readonly createdAt: Date } | null;
  readonly symbol: string | null;
}

interface TradeResult {
  buyOk: boolean;
  transferOk: boolean;
  sellOk: boolean;
  sellAllOk: boolean;
  expectedBuy: bigint;
  bought: bigint;
  transferSent: bigint;
  transferReceived: bigint;
  sellAmount: bigint;
  expectedSell: bigint;
  sold: bigint;
  transferDebited: bigint;
}

interface PassingResult {
  funded: boolean;
  originOk: boolean;
  codelessOk: boolean;
}

interface PrivilegedResult {
  funded: boolean;
  callOk: boolean;
  supplyDelta: bigint;
  holderDelta: bigint;
  callerDelta: bigint;
  holderSendOk: boolean;
  otherSendOk: boolean;
  callerSendOk: boolean;
  traded: boolean;
  after_: TradeResult;
}

/** A pool to trade through: the router, the pair, and how much ETH a probe trade spends. */
interface Market {
  readonly router: Address;
  /** The token/WETH pair: also tried as the address argument of privileged calls. */
  readonly pair: Address;
  readonly value: bigint;
}

const orNull = <T>(promise: Promise<T>): Promise<T | null> =>
  promise.then(
    (v) => v,
    () => null,
  );
const ratioLoss = (expected: bigint, actual: bigint): number | null =>
  expected > 0n ? 1 - Number((actual * 1_000_000n) / expected) / 1_000_000 : null;

/**
 * Our simulation reverted (the EVM said no), as opposed to the node failing to answer. A revert
 * is a finding or an inconclusive probe, never "the node did not answer" (502).
 */
export function isSimulationRevert(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  return (
    error.walk(
      (e) =>
        e instanceof ExecutionRevertedError ||
        e instanceof ContractFunctionRevertedError ||
        (e instanceof RpcRequestError && e.code === 3),
    ) !== null
  );
}

/** Runs one simulation; a revert of our own probe answers null, node trouble is thrown. */
async function simulated<T>(run: () => Promise<T>): Promise<T | null> {
  try {
    return await run();
  } catch (error) {
    if (isSimulationRevert(error)) return null;
    throw error;
  }
}

const tradeFindings = (t: TradeResult): TradeFindings => ({
  buyOk: t.buyOk && t.bought > 0n,
  transferOk: t.transferOk && t.transferReceived > 0n,
  sellOk: t.sellOk,
  sellAllOk: t.sellAllOk,
  buyTax: t.buyOk ? ratioLoss(t.expectedBuy, t.bought) : null,
  sellTax: t.sellOk ? ratioLoss(t.expectedSell, t.sold) : null,
  // A tax is what left the sender and did not arrive. A transfer that reports success but
  // debits nothing moved nothing: no tax to measure (and no sign of a trap: the pool trades say that).
  transferTax:
    t.transferOk && t.transferDebited > 0n
      ? ratioLoss(t.transferDebited, t.transferReceived)
      : null,
});

/**
 * Reads and simulates a token contract: bytecode, proxy slots, owner and other privileged
 * callers, pool trade, privileged powers (each followed by a trade), creation.
 */
export interface AnalyzeOptions {
  /** Runtime code already read by the caller (the verdict cache is keyed by its hash). */
  readonly code?: Hex;
  /**
   * Re-runs a failed one-call trade as real transactions across blocks (ForkSimulator), so an
   * ordinary anti-bot rule is not mistaken for a honeypot. Absent: the one-call result stands.
   */
  readonly confirmTrade?: (
    token: Address,
    router: Address,
    value: bigint,
    blockNumber: bigint,
  ) => Promise<TradeFindings>;
  /** Told when the confirmation could not run (the one-call result is kept). */
  readonly onConfirmFailed?: (error: unknown) => void;
}

export async function analyzeToken(
  client: PublicClient,
  token: Address,
  routers: readonly Address[],
  options: AnalyzeOptions = {},
): Promise<TokenAnalysis | null> {
  let code = options.code;
  code ??= await client.getCode({ address: token });
  if (!code || code === '0x') return null;
  const blockNumber = await client.getBlockNumber({ cacheTime: 0 });
  const facts = analyzeBytecode(code);
  const { isProxy, implementation } = await readProxy(client, token, code);
  const implFacts = implementation
    ? analyzeBytecode((await client.getCode({ address: implementation })) ?? '0x')
    : null;
  const selectors = new Set([...facts.selectors, ...(implFacts?.selectors ?? [])]);

  const [ownerA, ownerB, symbol, balance, creator, { market, known: poolKnown }] =
    await Promise.all([
      orNull(client.readContract({ address: token, abi: OWNER_ABI, functionName: 'owner' })),
      orNull(client.readContract({ address: token, abi: OWNER_ABI, functionName: 'getOwner' })),
      orNull(client.readContract({ address: token, abi: META_ABI, functionName: 'symbol' })),
      client.getBalance({ address: token }),
      findCreation(client, token),
      findMarket(client, token, routers),
    ]);
  const owner = ownerA ?? ownerB;
  const hasOwnerFunction = owner !== null;
  const ownerActive = owner !== null && !DEAD.has(owner.toLowerCase());
  const callers = await privilegedCallers(client, token, {
    owner: ownerActive ? owner : null,
    creator: creator ? (creator.address as Address) : null,
    slots: [...facts.callerCheckedSlots, ...(implFacts?.callerCheckedSlots ?? [])],
    addresses: [...facts.callerCheckedAddresses, ...(implFacts?.callerCheckedAddresses ?? [])],
  });

  // Without a pool no sale can be simulated; what a holder can do with tokens is then measured
  // by giving some to the two stand-in wallets from a privileged caller (ADR 0303, 2nd amendment).
  const [oneCallTrade, probed, passing] = await Promise.all([
    market ? simulateTrade(client, token, market) : Promise.resolve(null),
    probePrivileges(client, token, callers, selectors, market),
    market ? Promise.resolve(null) : passOn(client, token, callers),
  ]);
  let trade = oneCallTrade;
  const failed =
    trade !== null &&
    (!trade.buyOk || !trade.sellOk || !trade.sellAllOk || trade.callerDependent === true);
  if (market && failed && options.confirmTrade) {
    try {
      const confirmed = await options.confirmTrade(token, market.router, market.value, blockNumber);
      // A fork session that bought is what a real wallet meets (a plain account, tx.origin of
      // its own transactions, one step per block): its result stands either way. It clears an
      // anti-bot rule the one-call trade tripped, and it shows a sale that fails for real wallets
      // where the one-call buy was refused (a token that lets only accounts without code buy
      // and traps them at the sale is a honeypot, not just "cannot buy"). A fork that could not
      // buy leaves the one-call finding.
      if (confirmed.buyOk) trade = confirmed;
    } catch (error) {
      options.onConfirmFailed?.(error);
    }
  }
  // A capability known by name counts only when a stranger is refused it (WETH9's withdraw is
  // everyone's own money, not a privilege).
  const capabilities = new Set<Capability>();
  for (const selector of selectors) {
    const known = KNOWN_FUNCTIONS.get(selector);
    if (!known) continue;
    if (OWNER_GATED_KINDS.has(known.capability) && probed.publicSelectors.has(selector)) continue;
    capabilities.add(known.capability);
  }
  // A sale trap armed today (setMarket(pair) called) hides the switch from the probe that arms
  // it: the trade after the call fails as it did before. The same switch shows the other way: one
  // privileged call makes sales work again. Counted only when the token's trade says a real wallet
  // cannot sell (a honeypot, not a rule against contract sellers), so a live trap never shows
  // fewer powers than the same trap dormant (QA M2, ADR 0304 amendment).
  const trapped = trade !== null && trade.buyOk && !trade.sellOk && trade.callerDependent !== true;
  const switchHeld = trapped && probed.salesFreed.found;
  const privileges: PrivilegeFindings = switchHeld
    ? {
        ...probed.privileges,
        sellBlockProven: true,
        hiddenPowerProven: probed.privileges.hiddenPowerProven || probed.salesFreed.hidden,
      }
    : probed.privileges;
  const findings: TokenFindings = {
    capabilities,
    hasOwnerFunction,
    ownerActive,
    privilegeHeld: probed.privilegeHeld || switchHeld,
    isProxy,
    selfdestruct: facts.hasSelfdestruct || (implFacts?.hasSelfdestruct ?? false),
    // UUPS logic delegatecalls its new implementation while upgrading: that is the proxy risk, not an extra one.
    externalCall:
      !capabilities.has('upgrade') &&
      ((!isProxy && facts.hasDelegatecall) || (implFacts?.hasDelegatecall ?? false)),
    holdsEth: balance > 0n,
    trade,
    liquidityPool: market ? true : poolKnown ? false : null,
    privileges,
    holders: passing && { ...passing, opened: probed.holdersFreed },
  };
  return { findings, creator, symbol };
}

const OWNER_GATED_KINDS: ReadonlySet<Capability> = new Set([
  'mint',
  'blacklist',
  'pause',
  'fee_setter',
  'withdraw',
  'balance_setter',
  'admin_transfer',
]);

/**
 * A V2 pool of token/WETH with liquidity on one of the routers; `known` false when no router is
 * configured for the chain or none answered as a router (whether there is a pool is unknown).
 */
async function findMarket(
  client: PublicClient,
  token: Address,
  routers: readonly Address[],
): Promise<{ market: Market | null; known: boolean }> {
  let known = false;
  for (const router of routers) {
    const [factory, weth] = await Promise.all([
      orNull(client.readContract({ address: router, abi: ROUTER_ABI, functionName: 'factory' })),
      orNull(client.readContract({ address: router, abi: ROUTER_ABI, functionName: 'WETH' })),
    ]);
    if (!factory || !weth) continue;
    known = true;
    const pair = await orNull(
      client.readContract({
        address: factory,
        abi: FACTORY_ABI,
        functionName: 'getPair',
        args: [token, weth],
      }),
    );
    if (!pair || BigInt(pair) === 0n) continue;
    const [reserves, token0] = await Promise.all([
      orNull(client.readContract({ address: pair, abi: PAIR_ABI, functionName: 'getReserves' })),
      orNull(client.readContract({ address: pair, abi: PAIR_ABI, functionName: 'token0' })),
    ]);
    if (!reserves || !token0) continue;
    const wethReserve = token0.toLowerCase() === weth.toLowerCase() ? reserves[0] : reserves[1];
    if (wethReserve === 0n) continue;
    // About 0.5 % of the pool: big enough to measure taxes, small enough that price impact stays tiny.
    let value = wethReserve / 200n;
    if (value > 10n ** 18n) value = 10n ** 18n;
    if (value === 0n) value = 1n;
    return { market: { router, pair, value }, known };
  }
  return { market: null, known };
}

/**
 * Whether the contract answers the two reads every ERC-20 answers, `totalSupply()` and
 * `balanceOf(address)`, each with one word. A router, a factory or a multisig does not: the rug
 * pull checker has no token to rate there (400 `not_a_token`). A revert or an answer of another
 * size is "no"; the node failing us is thrown (502).
 */
export async function answersAsToken(client: PublicClient, token: Address): Promise<boolean> {
  const answers = (data: Hex) =>
    simulated(async () => (await client.call({ account: STRANGER, to: token, data })).data);
  const [supply, balance] = await Promise.all([
    answers(encodeFunctionData({ abi: ERC20_READS, functionName: 'totalSupply' })),
    answers(encodeFunctionData({ abi: ERC20_READS, functionName: 'balanceOf', args: [STRANGER] })),
  ]);
  const oneWord = (data: Hex | null | undefined) => typeof data === 'string' && data.length === 66;
  return oneWord(supply) && oneWord(balance);
}

/**
 * What a verdict read from the chain's state rather than from the code: the owner, the pool, and
 * the one-call trade a fresh wallet makes today. The rug pull verdict cache is keyed by it beside
 * the code (ADR 0303, third amendment), so an owner who arms a trading switch or raises a fee
 * after a check, adds or pulls liquidity, or hands over ownership gets a fresh verdict at the
 * next check instead of the cached one. About 10 reads and two eth_calls per check.
 */
export async function tokenState(
  client: PublicClient,
  token: Address,
  routers: readonly Address[],
): Promise<string> {
  const [ownerA, ownerB, { market, known }] = await Promise.all([
    orNull(client.readContract({ address: token, abi: OWNER_ABI, functionName: 'owner' })),
    orNull(client.readContract({ address: token, abi: OWNER_ABI, functionName: 'getOwner' })),
    findMarket(client, token, routers),
  ]);
  const owner = (ownerA ?? ownerB ?? 'none').toLowerCase();
  if (!market) return `owner=${owner};pool=${known ? 'none' : 'unknown'}`;
  const trade = await simulateTrade(client, token, market);
  const bit = (b: boolean) => (b ? '1' : '0');
  const tax = (t: number | null) => (t === null ? '-' : t.toFixed(2));
  const shown = trade
    ? `${bit(trade.buyOk)}${bit(trade.transferOk)}${bit(trade.sellOk)}${bit(trade.sellAllOk)}` +
      `${trade.callerDependent ? 'c' : ''}:${tax(trade.buyTax)}/${tax(trade.sellTax)}/${tax(trade.transferTax)}`
    : 'reverted';
  return `owner=${owner};pool=${market.pair.toLowerCase()};trade=${shown}`;
}

/**
 * Buy → transfer → sell, each in one eth_call, by the two wallets a token could tell from a real
 * one: the wallet that is tx.origin (the probe's code at the call's `from`; it has code) and a
 * wallet without code (a contract trading in its constructor; it is not tx.origin). A real wallet
 * is both, so the trade found is the worse of the two (`worseTrade`). null: a probe reverted.
 */
async function simulateTrade(
  client: PublicClient,
  token: Address,
  market: Market,
): Promise<TradeFindings | null> {
  const run = (functionName: 'tradeHere' | 'tradeCodeless', from: Address) =>
    simulated(async () => {
      const { data } = await client.call({
        account: from,
        to: PROBE_ADDRESS,
        data: encodeFunctionData({
          abi: PROBE.abi,
          functionName,
          args: [token, market.router, FRESH_RECIPIENT],
        }),
        value: market.value,
        stateOverride: [
          {
            address: PROBE_ADDRESS,
            code: PROBE.deployedBytecode,
            balance: market.value * 2n + 10n ** 18n,
          },
          { address: PROBE_CALLER, balance: market.value * 2n + 10n ** 18n },
        ],
      });
      return decodeFunctionResult({ abi: PROBE.abi, functionName, data: data! }) as TradeResult;
    });
  const [asOrigin, codeless] = await Promise.all([
    run('tradeHere', PROBE_ADDRESS),
    run('tradeCodeless', PROBE_CALLER),
  ]);
  if (!asOrigin || !codeless) {
    const one = asOrigin ?? codeless;
    return one ? tradeFindings(one) : null;
  }
  return worseTrade(tradeFindings(asOrigin), tradeFindings(codeless));
}

const maxTax = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.max(a, b);

/** Taxes further apart than this are a difference between the wallets, not rounding. */
const TAX_TOLERANCE = 0.01;

const taxesDiffer = (a: number | null, b: number | null): boolean =>
  a !== null && b !== null && Math.abs(a - b) > TAX_TOLERANCE;

/**
 * The two probe wallets' trades as one: each step passed only if both passed it, each tax the
 * higher one, and `callerDependent` when they met different trades. A real wallet is both
 * tx.origin and without code, but neither probe is: a sale refused to one of them alone is what
 * a honeypot that refuses tx.origin shows, and what an anti-bot rule that refuses contracts
 * shows too, so it counts as a restriction until a fork trade shows which (ADR 0303).
 */
export function worseTrade(a: TradeFindings, b: TradeFindings): TradeFindings {
  const callerDependent =
    a.buyOk !== b.buyOk ||
    a.transferOk !== b.transferOk ||
    a.sellOk !== b.sellOk ||
    a.sellAllOk !== b.sellAllOk ||
    taxesDiffer(a.buyTax, b.buyTax) ||
    taxesDiffer(a.sellTax, b.sellTax) ||
    taxesDiffer(a.transferTax, b.transferTax);
  return {
    buyOk: a.buyOk && b.buyOk,
    transferOk: a.transferOk && b.transferOk,
    sellOk: a.sellOk && b.sellOk,
    sellAllOk: a.sellAllOk && b.sellAllOk,
    buyTax: maxTax(a.buyTax, b.buyTax),
    sellTax: maxTax(a.sellTax, b.sellTax),
    transferTax: maxTax(a.transferTax, b.transferTax),
    ...(callerDependent ? { callerDependent } : {}),
  };
}

/**
 * What holders can do with tokens where there is no pool: from each privileged caller in turn
 * (the first that can give tokens away), tokens go to the wallet that is tx.origin (the call's
 * `from`, holding the probe's code) and to one without code, and each passes half of them on.
 * null: no caller could give both of them tokens (nothing measured).
 */
async function passOn(
  client: PublicClient,
  token: Address,
  callers: readonly Address[],
): Promise<Omit<HolderTransfers, 'opened'> | null> {
  for (const caller of callers) {
    const result = await simulated(async () => {
      const { data } = await client.call({
        account: PROBE_ADDRESS,
        to: caller,
        data: encodeFunctionData({ abi: PROBE.abi, functionName: 'passOn', args: [token] }),
        stateOverride: [
          { address: caller, code: PROBE.deployedBytecode },
          { address: PROBE_ADDRESS, code: PROBE.deployedBytecode },
        ],
      });
      return decodeFunctionResult({
        abi: PROBE.abi,
        functionName: 'passOn',
        data: data!,
      }) as PassingResult;
    });
    if (result?.funded) return { originOk: result.originOk, codelessOk: result.codelessOk };
  }
  return null;
}

/**
 * Who may hold powers over the token: the owner, any non-zero address stored in a slot the code
 * compares with CALLER or embedded in such a comparison, and the creator (who keeps roles in
 * `wards`/AccessControl-style tokens). Contracts are kept too: the probe stands in for them.
 */
async function privilegedCallers(
  client: PublicClient,
  token: Address,
  sources: {
    owner: Address | null;
    creator: Address | null;
    slots: readonly string[];
    addresses: readonly string[];
  },
): Promise<Address[]> {
  const fromSlots = await Promise.all(
    sources.slots.slice(0, 8).map(async (slot) => {
      const value = await orNull(client.getStorageAt({ address: token, slot: slot as Hex }));
      if (!value) return null;
      // Ownable-style packing keeps the address in the low 20 bytes.
      const low = BigInt(value) & ((1n << 160n) - 1n);
      return low === 0n ? null : (getAddress(`0x${low.toString(16).padStart(40, '0')}`) as Address);
    }),
  );
  const all = [
    sources.owner,
    ...fromSlots,
    ...sources.addresses.map((a) => getAddress(a) as Address),
    sources.creator,
  ].filter((a): a is Address => a !== null && !DEAD.has(a.toLowerCase()));
  const unique = [...new Map(all.map((a) => [a.toLowerCase(), a])).values()];
  return unique.filter((a) => a.toLowerCase() !== token.toLowerCase()).slice(0, MAX_CALLERS);
}

/**
 * Argument lists to try for a selector: its known parameters, else the common shapes. Wherever
 * an address goes, the holder; and, with a pool, the pair too (`pairArgument`): a trading switch
 * that takes the pool's address (`setMarket(pair)`: every sale to it reverts) is armed only by
 * the pair, never by a wallet.
 */
function calldataFor(selector: string, pair: Address | null): ProbeCall[] {
  const known = KNOWN_FUNCTIONS.get(selector);
  const shapes = known ? [known.params] : COMMON_SHAPES;
  return shapes.flatMap((params) => {
    const takesAddress = params.some((p) => p === 'address' || p === 'address[]');
    return [HOLDER_PLACEHOLDER, ...(pair && takesAddress ? [pair] : [])].flatMap((address) =>
      argumentSets(params, address).map((args) => ({
        selector,
        data: encodeCall(selector, params, args),
        pairArgument: address !== HOLDER_PLACEHOLDER,
      })),
    );
  });
}

interface ProbeCall {
  readonly selector: string;
  readonly data: Hex;
  /** The pool's pair was the address argument (not the holder). */
  readonly pairArgument: boolean;
}

const COMMON_SHAPES: readonly (readonly string[])[] = [
  [],
  ['address'],
  ['address', 'uint256'],
  ['address', 'bool'],
  ['address[]'],
  ['address[]', 'bool'],
  ['uint256'],
  ['uint256', 'uint256'],
  ['bool'],
];

/** Values for one shape: `address` wherever an address goes, 1 as an amount, rates as rates. */
function argumentSets(params: readonly string[], address: Address): unknown[][] {
  const rateOnly = params.length > 0 && params.every((p) => p === 'uint256');
  const values = rateOnly ? RATE_VALUES : [1n];
  return values.map((n) =>
    params.map((p) => {
      if (p === 'address') return address;
      if (p === 'address[]') return [address];
      if (p === 'bool') return true;
      if (p === 'uint256[]') return [n];
      if (p === 'bytes32') return `0x${'00'.repeat(32)}`;
      if (p.startsWith('uint') || p.startsWith('int')) return n;
      if (p === 'string') return 'probe';
      if (p === 'bytes') return '0x';
      return 0n;
    }),
  );
}

function encodeCall(selector: string, params: readonly string[], args: readonly unknown[]): Hex {
  const encoded = encodeAbiParameters(
    params.map((type) => ({ type })),
    args as never,
  );
  return concatHex([selector as Hex, encoded]);
}

/** The same call with amounts zeroed: what a stranger would try on a public function. */
function strangerCalldata(selector: string): Hex[] {
  const known = KNOWN_FUNCTIONS.get(selector);
  const shapes = known ? [known.params] : [];
  return shapes.map((params) =>
    encodeCall(
      selector,
      params,
      params.map((p) =>
        p === 'address'
          ? STRANGER
          : p === 'address[]'
            ? [STRANGER]
            : p === 'bool'
              ? false
              : p === 'bytes32'
                ? `0x${'00'.repeat(32)}`
                : p === 'string'
                  ? ''
                  : p === 'bytes'
                    ? '0x'
                    : p.endsWith('[]')
                      ? []
                      : 0n,
      ),
    ),
  );
}

interface ProbeOutcome {
  readonly privileges: PrivilegeFindings;
  readonly privilegeHeld: boolean;
  /** Known owner-gated selectors a stranger may call (not privileges). */
  readonly publicSelectors: ReadonlySet<string>;
  /** Holders could not transfer before a privileged call and could after it (a launch switch). */
  readonly holdersFreed: boolean;
  /**
   * A fresh wallet could buy but not sell before a privileged call and could sell after it: the
   * caller holds the switch of a sale trap armed today. `hidden`: the function's name does not
   * declare a pause, blacklist or fee.
   */
  readonly salesFreed: { readonly found: boolean; readonly hidden: boolean };
}

/**
 * Calls each candidate function from each privileged caller's address (the probe's code placed
 * there by state override), one eth_call per call so calls never interfere, with the argument
 * shapes the function may take (arrays included). Each call is followed, in the same eth_call,
 * by checks of the holders' and the caller's transfers and by a trade from a fresh wallet, so a
 * fee raised or a switch flipped shows as the trade it changes, even when it is unused today.
 */
async function probePrivileges(
  client: PublicClient,
  token: Address,
  callers: readonly Address[],
  selectors: ReadonlySet<string>,
  market: Market | null,
): Promise<ProbeOutcome> {
  const candidates = [...selectors]
    .filter((s) => !IGNORED_PUSH4.has(s))
    .filter((s) => {
      const capability = KNOWN_SELECTORS.get(s);
      return capability === undefined || !NEVER_PROBE.has(capability);
    })
    .slice(0, MAX_PROBED);

  const publicSelectors = new Set<string>();
  await Promise.all(
    candidates
      .filter((s) => OWNER_GATED_KINDS.has(KNOWN_SELECTORS.get(s)!))
      .map(async (selector) => {
        for (const data of strangerCalldata(selector)) {
          const ok = await client.call({ account: STRANGER, to: token, data }).then(
            () => true,
            (error: unknown) => {
              if (isSimulationRevert(error)) return false;
              throw error;
            },
          );
          if (ok) publicSelectors.add(selector);
        }
      }),
  );

  /**
   * One privileged call from `caller`. With `origin` unset the caller is tx.origin too, as when
   * the owner signs: powers gated by `tx.origin == owner` answer. With `origin` (a plain account
   * as the call's `from`), msg.sender is still the caller but tx.origin is not: a fee the owner
   * raised and exempts its own transactions from (`tx.origin == owner`) shows on the trade after.
   */
  const run = (caller: Address, data: Hex, origin?: Address) =>
    simulated(async () => {
      const value = market?.value ?? 0n;
      const funds = value * 2n + 10n ** 18n;
      const { data: output } = await client.call({
        account: origin ?? caller,
        to: caller,
        value,
        data: encodeFunctionData({
          abi: PROBE.abi,
          functionName: 'privileged',
          args: [token, data, market?.router ?? zeroAddress, FRESH_RECIPIENT],
        }),
        stateOverride: [
          { address: caller, code: PROBE.deployedBytecode, balance: funds },
          ...(origin ? [{ address: origin, balance: funds }] : []),
        ],
      });
      return decodeFunctionResult({
        abi: PROBE.abi,
        functionName: 'privileged',
        data: output!,
      }) as PrivilegedResult;
    });

  const found = {
    mintProven: false,
    seizeProven: false,
    blacklistProven: false,
    pauseProven: false,
    sellBlockProven: false,
    maxSellTaxAfterCall: null as number | null,
    hiddenPowerProven: false,
  };
  let privilegeHeld = false;
  let holdersFreed = false;
  const salesFreed = { found: false, hidden: false };
  for (const caller of callers) {
    const calls = candidates.flatMap((selector) => calldataFor(selector, market?.pair ?? null));
    // As the caller first (every call); then, with a pool, the calls that went through again
    // from a plain account, so the trade after each runs with another tx.origin than the caller.
    const answered = await probeFrom(caller, calls);
    if (market) await probeFrom(caller, answered, PROBE_CALLER);
  }
  return { privileges: found, privilegeHeld, publicSelectors, holdersFreed, salesFreed };

  /** Runs `calls` from `caller` (tx.origin: `origin`, else the caller); returns those that went through. */
  async function probeFrom(
    caller: Address,
    calls: readonly ProbeCall[],
    origin?: Address,
  ): Promise<ProbeCall[]> {
    if (calls.length === 0) return [];
    const baseline = await run(caller, '0xdeadbeef', origin);
    const transfersWork =
      baseline !== null && baseline.funded && baseline.holderSendOk && baseline.otherSendOk;
    const transfersStuck =
      baseline !== null && baseline.funded && !baseline.holderSendOk && !baseline.otherSendOk;
    const baseTrade = baseline?.traded ? tradeFindings(baseline.after_) : null;
    const tradesWork = baseTrade !== null && baseTrade.buyOk && baseTrade.sellOk;
    const salesBlocked = baseTrade !== null && baseTrade.buyOk && !baseTrade.sellOk;
    const results = await Promise.all(
      calls.map(async (c) => ({ ...c, r: await run(caller, c.data, origin) })),
    );
    const wentThrough: ProbeCall[] = [];
    for (const { selector, data, pairArgument, r } of results) {
      if (!r || !r.callOk) continue;
      wentThrough.push({ selector, data, pairArgument });
      if (transfersStuck && r.funded && r.holderSendOk && r.otherSendOk) holdersFreed = true;
      const declared = KNOWN_SELECTORS.get(selector);
      if (declared && OWNER_GATED_KINDS.has(declared) && !publicSelectors.has(selector))
        privilegeHeld = true;
      if (salesBlocked && r.traded) {
        const after = tradeFindings(r.after_);
        if (after.buyOk && after.sellOk) {
          salesFreed.found = true;
          if (!declared || !['pause', 'blacklist', 'fee_setter'].includes(declared))
            salesFreed.hidden = true;
        }
      }
      // A call given the pair is asked one thing: does it stop sales while buys go on (a switch
      // that makes the pool a trap)? A blacklist or pause that stops the pool both ways stops
      // everyone, the power a holder-address call already shows (ADR 0303, third amendment).
      if (pairArgument) {
        if (tradesWork && r.traded) {
          const after = tradeFindings(r.after_);
          if (after.buyOk && !after.sellOk) {
            found.sellBlockProven = true;
            privilegeHeld = true;
            if (!declared || !['pause', 'blacklist', 'fee_setter'].includes(declared))
              found.hiddenPowerProven = true;
          }
        }
        continue;
      }
      const proven: Capability[] = [];
      // Credited from nowhere: new supply, or a balance raised that the caller did not pay for.
      if (
        r.supplyDelta > 0n ||
        (r.holderDelta > 0n && r.supplyDelta === 0n && r.callerDelta >= 0n)
      ) {
        found.mintProven = true;
        proven.push('mint');
      }
      if (r.holderDelta < 0n) {
        found.seizeProven = true;
        proven.push('admin_transfer', 'balance_setter', 'blacklist');
      }
      if (transfersWork && r.funded && !r.holderSendOk && r.otherSendOk) {
        found.blacklistProven = true;
        proven.push('blacklist');
      }
      if (transfersWork && r.funded && !r.holderSendOk && !r.otherSendOk) {
        found.pauseProven = true;
        proven.push('pause');
      }
      if (tradesWork && r.traded) {
        const after = tradeFindings(r.after_);
        const blocked = !after.buyOk || !after.sellOk;
        if (after.sellTax !== null)
          found.maxSellTaxAfterCall = Math.max(found.maxSellTaxAfterCall ?? 0, after.sellTax);
        if (after.sellTax !== null && after.sellTax > (baseTrade.sellTax ?? 0) + 0.01)
          proven.push('fee_setter');
        if (blocked && r.callerSendOk) {
          found.sellBlockProven = true;
          proven.push('pause', 'blacklist', 'fee_setter');
        }
      }
      if (proven.length === 0) continue;
      privilegeHeld = true;
      // The power was proven; does the function's name declare it?
      if (!declared || !proven.includes(declared)) found.hiddenPowerProven = true;
    }
    return wentThrough;
  }
}

/** Creation block by binary search on eth_getCode (needs historical state), then the creating transaction in it. */
async function findCreation(
  client: PublicClient,
  token: Address,
): Promise<{ address: string; createdAt: Date } | null> {
  try {
    let lo = 0n;
    let hi = await client.getBlockNumber({ cacheTime: 0 });
    while (lo < hi) {
      const mid = (lo + hi) / 2n;
      const code = await client.getCode({ address: token, blockNumber: mid });
      if (code && code !== '0x') hi = mid;
      else lo = mid + 1n;
    }
    const block = await client.getBlock({ blockNumber: lo, includeTransactions: true });
    const createdAt = new Date(Number(block.timestamp) * 1000);
    const target = token.toLowerCase();
    for (const tx of block.transactions) {
      if (
        tx.to === null &&
        getContractAddress({ from: tx.from, nonce: BigInt(tx.nonce) }).toLowerCase() === target
      )
        return { address: tx.from, createdAt };
    }
    // Created by a factory inside another transaction: the creation time is known, the creator EOA is not.
    return null;
  } catch {
    return null;
  }
}
