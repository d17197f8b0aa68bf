import {
  decodeFunctionResult,
  encodeFunctionData,
  getContractAddress,
  parseAbi,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import {
  analyzeBytecode,
  EIP1167_PREFIX,
  EIP1967_BEACON_SLOT,
  EIP1967_IMPLEMENTATION_SLOT,
} from './bytecode';
import {
  NO_PRIVILEGES,
  type PrivilegeFindings,
  type TokenFindings,
  type TradeFindings,
} from './risk-score';
import { KNOWN_SELECTORS, NEVER_PROBE, type Capability } from './selectors';
import probeArtifacts from './simulator/token-probe.artifact.json';

const PROBE = probeArtifacts.TokenProbe as { abi: Abi; deployedBytecode: Hex };
/** Unused addresses the simulation runs from: nobody holds keys to them and no state exists there. */
const PROBE_ADDRESS = '0x00000000000000000000000000000000a0d17001' as Address;
const PROBE_CALLER = '0x00000000000000000000000000000000a0d17002' as Address;
const FRESH_RECIPIENT = '0x00000000000000000000000000000000a0d17003' as Address;
const DEAD = new Set([
  '0x0000000000000000000000000000000000000000',
  '0x000000000000000000000000000000000000dead',
]);
const IGNORED_PUSH4 = new Set(['0xffffffff', '0x4e487b71', '0x08c379a0', '0x00000000']);
const MAX_PROBED = 32;

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
}

interface PrivilegedResult {
  funded: boolean;
  callOk: boolean;
  supplyDelta: bigint;
  holderDelta: bigint;
  holderSendOk: boolean;
  otherSendOk: boolean;
}

const orNull = <T>(promise: Promise<T>): Promise<T | null> =>
  promise.then(
    (v) => v,
    () => null,
  );
const ratioLoss = (expected: bigint, actual: bigint): number | null =>
  expected > 0n ? 1 - Number((actual * 1_000_000n) / expected) / 1_000_000 : null;

/** Reads and simulates a token contract: bytecode, proxy slots, owner, pool trade, owner powers, creation. */
export async function analyzeToken(
  client: PublicClient,
  token: Address,
  routers: readonly Address[],
): Promise<TokenAnalysis | null> {
  const code = await client.getCode({ address: token });
  if (!code || code === '0x') return null;
  const facts = analyzeBytecode(code);
  const [implSlot, beaconSlot] = await Promise.all([
    client.getStorageAt({ address: token, slot: EIP1967_IMPLEMENTATION_SLOT }),
    client.getStorageAt({ address: token, slot: EIP1967_BEACON_SLOT }),
  ]);
  const slotAddress = (slot: Hex | undefined) =>
    slot && BigInt(slot) !== 0n ? (`0x${slot.slice(-40)}` as Address) : null;
  const minimalProxy = code.toLowerCase().startsWith(EIP1167_PREFIX)
    ? (`0x${code.slice(22, 62)}` as Address)
    : null;
  const implementation = slotAddress(implSlot) ?? minimalProxy;
  const isProxy = implementation !== null || slotAddress(beaconSlot) !== null;
  const implFacts = implementation
    ? analyzeBytecode((await client.getCode({ address: implementation })) ?? '0x')
    : null;
  const selectors = new Set([...facts.selectors, ...(implFacts?.selectors ?? [])]);
  const capabilities = new Set<Capability>();
  for (const selector of selectors) {
    const capability = KNOWN_SELECTORS.get(selector);
    if (capability) capabilities.add(capability);
  }

  const [ownerA, ownerB, symbol, balance] = await Promise.all([
    orNull(client.readContract({ address: token, abi: OWNER_ABI, functionName: 'owner' })),
    orNull(client.readContract({ address: token, abi: OWNER_ABI, functionName: 'getOwner' })),
    orNull(client.readContract({ address: token, abi: META_ABI, functionName: 'symbol' })),
    client.getBalance({ address: token }),
  ]);
  const owner = ownerA ?? ownerB;
  const hasOwnerFunction = owner !== null;
  const ownerActive = owner !== null && !DEAD.has(owner.toLowerCase());

  const [trade, privileges, creator] = await Promise.all([
    simulateTrade(client, token, routers),
    ownerActive
      ? probePrivileges(client, token, owner!, selectors)
      : Promise.resolve(NO_PRIVILEGES),
    findCreation(client, token),
  ]);
  const findings: TokenFindings = {
    capabilities,
    hasOwnerFunction,
    ownerActive,
    isProxy,
    selfdestruct: facts.hasSelfdestruct || (implFacts?.hasSelfdestruct ?? false),
    // UUPS logic delegatecalls its new implementation while upgrading: that is the proxy risk, not an extra one.
    externalCall:
      !capabilities.has('upgrade') &&
      ((!isProxy && facts.hasDelegatecall) || (implFacts?.hasDelegatecall ?? false)),
    holdsEth: balance > 0n,
    trade,
    privileges,
  };
  return { findings, creator, symbol };
}

/** Finds a V2 pool of token/WETH with liquidity on one of the routers and runs buy → transfer → sell. */
async function simulateTrade(
  client: PublicClient,
  token: Address,
  routers: readonly Address[],
): Promise<TradeFindings | null> {
  for (const router of routers) {
    const [factory, weth] = await Promise.all([
      orNull(client.readContract({ address: router, abi: ROUTER_ABI, functionName: 'factory' })),
      orNull(client.readContract({ address: router, abi: ROUTER_ABI, functionName: 'WETH' })),
    ]);
    if (!factory || !weth) continue;
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
    const data = encodeFunctionData({
      abi: PROBE.abi,
      functionName: 'trade',
      args: [token, router, FRESH_RECIPIENT],
    });
    const { data: output } = await client.call({
      account: PROBE_CALLER,
      to: PROBE_ADDRESS,
      data,
      value,
      stateOverride: [
        { address: PROBE_ADDRESS, code: PROBE.deployedBytecode, balance: 0n },
        { address: PROBE_CALLER, balance: value * 2n + 10n ** 18n },
      ],
    });
    const t = decodeFunctionResult({
      abi: PROBE.abi,
      functionName: 'trade',
      data: output!,
    }) as TradeResult;
    return {
      buyOk: t.buyOk && t.bought > 0n,
      transferOk: t.transferOk && t.transferReceived > 0n,
      sellOk: t.sellOk,
      sellAllOk: t.sellAllOk,
      buyTax: t.buyOk ? ratioLoss(t.expectedBuy, t.bought) : null,
      sellTax: t.sellOk ? ratioLoss(t.expectedSell, t.sold) : null,
      transferTax: t.transferOk ? ratioLoss(t.transferSent, t.transferReceived) : null,
    };
  }
  return null;
}

/**
 * Calls each candidate owner function from the owner's address (the probe's code placed there by
 * state override) with (a fresh holder, 1) as arguments, one eth_call each so calls never
 * interfere, and keeps what changed. A baseline with a selector nothing answers tells whether
 * holders can transfer at all, so blocked transfers are blamed on the call only when they could.
 */
async function probePrivileges(
  client: PublicClient,
  token: Address,
  owner: Address,
  selectors: ReadonlySet<string>,
): Promise<PrivilegeFindings> {
  const candidates = [...selectors]
    .filter((s) => !IGNORED_PUSH4.has(s))
    .filter((s) => {
      const capability = KNOWN_SELECTORS.get(s);
      return capability === undefined || !NEVER_PROBE.has(capability);
    })
    .slice(0, MAX_PROBED);
  const run = async (selector: string): Promise<PrivilegedResult | null> => {
    try {
      const { data } = await client.call({
        account: owner,
        to: owner,
        data: encodeFunctionData({
          abi: PROBE.abi,
          functionName: 'privileged',
          args: [token, selector as Hex],
        }),
        stateOverride: [{ address: owner, code: PROBE.deployedBytecode }],
      });
      return decodeFunctionResult({
        abi: PROBE.abi,
        functionName: 'privileged',
        data: data!,
      }) as PrivilegedResult;
    } catch {
      return null;
    }
  };
  const [baseline, ...results] = await Promise.all([run('0xdeadbeef'), ...candidates.map(run)]);
  const transfersWork =
    baseline !== null && baseline.funded && baseline.holderSendOk && baseline.otherSendOk;
  const found = { ...NO_PRIVILEGES };
  for (const r of results) {
    if (!r || !r.callOk) continue;
    if (r.supplyDelta > 0n || (r.holderDelta > 0n && r.supplyDelta === 0n)) found.mintProven = true;
    if (r.holderDelta < 0n) found.seizeProven = true;
    if (transfersWork && r.funded && !r.holderSendOk && r.otherSendOk) found.blacklistProven = true;
    if (transfersWork && r.funded && !r.holderSendOk && !r.otherSendOk) found.pauseProven = true;
  }
  return found;
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
