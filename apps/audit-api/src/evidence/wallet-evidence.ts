import {
  getContractAddress,
  parseAbi,
  parseAbiItem,
  type Address,
  type Hex,
  type Log,
  type PublicClient,
} from 'viem';
import { isMethodOffered, networkByKey, type AuditChain } from '@meridian/networks';

export interface MixerInteraction {
  readonly pool: string;
  readonly kind: 'deposit' | 'withdrawal';
  readonly txHash: string;
}

export interface WalletEvidence {
  readonly isContract: boolean;
  readonly txCount: number;
  readonly balanceWei: bigint;
  /**
   * The first activity the audit can see: the first sent transaction (nonce above zero), the
   * first native value received by an account that never sent one, or the first token transfer
   * of the look-back window, whichever is earliest (null: none readable).
   */
  readonly firstSeenAt: Date | null;
  /** The head block the evidence was read up to (the logs' window ends there). */
  readonly head: bigint;
  readonly mixerInteractions: readonly MixerInteraction[];
  readonly createdContracts: readonly string[];
  /** Other side of the token transfers seen in the look-back window (lower case). */
  readonly counterparties: readonly string[];
  readonly transferCount: number;
  /** Token contracts the address moved (lower case). */
  readonly tokensTouched: readonly string[];
  readonly token: { readonly symbol: string | null; readonly name: string | null } | null;
}

export const TORNADO_DEPOSIT = parseAbiItem(
  'event Deposit(bytes32 indexed commitment, uint32 leafIndex, uint256 timestamp)',
);
export const TORNADO_WITHDRAWAL = parseAbiItem(
  'event Withdrawal(address to, bytes32 nullifierHash, address indexed relayer, uint256 fee)',
);
const TRANSFER = parseAbiItem(
  'event Transfer(address indexed from, address indexed to, uint256 value)',
);
const ERC20_META = parseAbi([
  'function symbol() view returns (string)',
  'function name() view returns (string)',
]);

/** Contracts created by CREATE are at keccak(rlp(sender, nonce)): the last ones are checked for code. */
const CREATED_SCAN = 32;
const LOG_CHUNK = 10_000n;
const MAX_DEPOSIT_TXS = 200;

export interface EvidenceOptions {
  readonly lookbackBlocks: number;
  readonly mixerPools: readonly string[];
  /**
   * How the account nonce is read. The spec's method table of network E has no
   * eth_getTransactionCount (the gateway answers -32601 there), but it has eth_getProof, whose
   * answer carries the nonce; see `nonceReadFor`.
   */
  readonly nonceVia: NonceRead;
}

export type NonceRead = 'eth_getTransactionCount' | 'eth_getProof';

/** The nonce read a chain's node access offers (chains not relayed here: a plain node, which has both). */
export function nonceReadFor(chain: AuditChain): NonceRead {
  const network = chain.relayedNetwork ? networkByKey(chain.relayedNetwork) : undefined;
  if (!network || isMethodOffered(network, 'eth_getTransactionCount'))
    return 'eth_getTransactionCount';
  return 'eth_getProof';
}

function nonceOf(
  client: PublicClient,
  address: Address,
  via: NonceRead,
  blockNumber?: bigint,
): Promise<number> {
  const at = blockNumber === undefined ? {} : { blockNumber };
  return via === 'eth_getTransactionCount'
    ? client.getTransactionCount({ address, ...at })
    : client.getProof({ address, storageKeys: [], ...at }).then((proof) => proof.nonce);
}

/** The address's own state a wallet verdict depends on: its nonce and native balance. */
export async function walletStateVersion(
  client: PublicClient,
  address: string,
  via: NonceRead,
): Promise<string> {
  const target = address as Address;
  const [nonce, balance] = await Promise.all([
    nonceOf(client, target, via),
    client.getBalance({ address: target }),
  ]);
  return `nonce=${nonce};balance=${balance}`;
}

/** Reads the on-chain evidence of one address. Every call is a plain JSON-RPC read (no archive traces). */
export async function gatherWalletEvidence(
  client: PublicClient,
  address: string,
  options: EvidenceOptions,
): Promise<WalletEvidence> {
  const target = address as Address;
  const [code, txCount, balanceWei, head] = await Promise.all([
    client.getCode({ address: target }),
    nonceOf(client, target, options.nonceVia),
    client.getBalance({ address: target }),
    client.getBlockNumber({ cacheTime: 0 }),
  ]);
  const isContract = code !== undefined && code !== '0x';
  const fromBlock =
    head > BigInt(options.lookbackBlocks) ? head - BigInt(options.lookbackBlocks) : 0n;

  const [mixerInteractions, transfers, createdContracts, firstActive, token] = await Promise.all([
    mixerEvidence(client, target, options.mixerPools, fromBlock, head),
    transferEvidence(client, target, fromBlock, head),
    isContract ? Promise.resolve([]) : createdContractsOf(client, target, txCount),
    firstActiveBlock(client, target, options.nonceVia, head, { isContract, txCount, balanceWei }),
    isContract ? tokenMeta(client, target) : Promise.resolve(null),
  ]);
  const { firstBlock, ...transferFields } = transfers;
  const firstTransfer = firstBlock === null ? null : await blockTime(client, firstBlock);
  const seen = [firstActive, firstTransfer].filter((d): d is Date => d !== null);
  return {
    isContract,
    txCount,
    balanceWei,
    firstSeenAt: seen.length > 0 ? new Date(Math.min(...seen.map((d) => d.getTime()))) : null,
    head,
    mixerInteractions,
    createdContracts,
    ...transferFields,
    token,
  };
}

/**
 * Token transfers from or to the address after block `after`, up to the head: what a wallet
 * verdict read up to `after` has not seen (its version, nonce and balance, does not move with
 * them). Two log reads of the few blocks since, and the head.
 */
export async function transfersSince(client: PublicClient, address: string, after: bigint) {
  const head = await client.getBlockNumber({ cacheTime: 0 });
  // The chain is behind what the verdict read (a reorg, a restarted devnet): not the same chain.
  if (head < after) return 1;
  const { transferCount } = await transferEvidence(client, address as Address, after + 1n, head);
  return transferCount;
}

async function chunkedLogs<T>(
  fromBlock: bigint,
  toBlock: bigint,
  read: (from: bigint, to: bigint) => Promise<T[]>,
): Promise<T[]> {
  const out: T[] = [];
  for (let start = fromBlock; start <= toBlock; start += LOG_CHUNK) {
    const end = start + LOG_CHUNK - 1n < toBlock ? start + LOG_CHUNK - 1n : toBlock;
    out.push(...(await read(start, end)));
  }
  return out;
}

/**
 * Tornado pools emit Deposit without the depositor and Withdrawal with the recipient in data, so
 * deposits are matched on the sender of their transaction and withdrawals on `to`.
 */
async function mixerEvidence(
  client: PublicClient,
  address: Address,
  pools: readonly string[],
  fromBlock: bigint,
  toBlock: bigint,
): Promise<MixerInteraction[]> {
  if (pools.length === 0) return [];
  const logs = await chunkedLogs(fromBlock, toBlock, (from, to) =>
    client.getLogs({
      address: pools as Address[],
      events: [TORNADO_DEPOSIT, TORNADO_WITHDRAWAL],
      fromBlock: from,
      toBlock: to,
    }),
  );
  const mine = address.toLowerCase();
  const out: MixerInteraction[] = [];
  const depositTxs = [
    ...new Set(
      logs.filter((log) => log.eventName === 'Deposit').map((log) => log.transactionHash as Hex),
    ),
  ].slice(-MAX_DEPOSIT_TXS);
  const senders = await Promise.all(
    depositTxs.map((hash) =>
      client.getTransaction({ hash }).then((tx) => [hash, tx.from.toLowerCase()] as const),
    ),
  );
  const senderOf = new Map(senders);
  for (const log of logs) {
    if (log.eventName === 'Deposit' && senderOf.get(log.transactionHash as Hex) === mine) {
      out.push({ pool: log.address.toLowerCase(), kind: 'deposit', txHash: log.transactionHash! });
    } else if (log.eventName === 'Withdrawal' && String(log.args.to).toLowerCase() === mine) {
      out.push({
        pool: log.address.toLowerCase(),
        kind: 'withdrawal',
        txHash: log.transactionHash!,
      });
    }
  }
  return out;
}

async function transferEvidence(
  client: PublicClient,
  address: Address,
  fromBlock: bigint,
  toBlock: bigint,
) {
  const read = (args: { from: Address } | { to: Address }) =>
    chunkedLogs(fromBlock, toBlock, (from, to) =>
      client.getLogs({ event: TRANSFER, args, fromBlock: from, toBlock: to }),
    );
  const [outgoing, incoming] = await Promise.all([read({ from: address }), read({ to: address })]);
  const counterparties = new Set<string>();
  const tokens = new Set<string>();
  const add = (log: Log<bigint, number, false, typeof TRANSFER>, other: string | undefined) => {
    tokens.add(log.address.toLowerCase());
    if (other && other.toLowerCase() !== address.toLowerCase())
      counterparties.add(other.toLowerCase());
  };
  for (const log of outgoing) add(log, log.args.to);
  for (const log of incoming) add(log, log.args.from);
  const blocks = [...outgoing, ...incoming]
    .map((log) => log.blockNumber)
    .filter((n): n is bigint => n !== null);
  return {
    counterparties: [...counterparties],
    transferCount: outgoing.length + incoming.length,
    tokensTouched: [...tokens],
    /** The earliest block of a transfer in the window (null: none). */
    firstBlock: blocks.length > 0 ? blocks.reduce((a, b) => (b < a ? b : a)) : null,
  };
}

async function createdContractsOf(
  client: PublicClient,
  address: Address,
  nonce: number,
): Promise<string[]> {
  const nonces = Array.from({ length: Math.min(nonce, CREATED_SCAN) }, (_, i) =>
    BigInt(nonce - 1 - i),
  );
  const candidates = nonces.map((n) => getContractAddress({ from: address, nonce: n }));
  const codes = await Promise.all(
    candidates.map((candidate) => client.getCode({ address: candidate })),
  );
  return candidates
    .filter((_, i) => codes[i] !== undefined && codes[i] !== '0x')
    .map((candidate) => candidate.toLowerCase());
}

/**
 * The time of the account's first activity its own state shows (ADR 0306). An account without
 * code holds native value only its own transactions can spend, and each of those raises its
 * nonce for good: so "nonce above zero or balance above zero" is false until the first value
 * it received or the first transaction it sent, whichever came first, and true from then on.
 * One binary search over that finds a wallet that was funded long before it first sent (QA: its
 * age ran from the send). A contract's nonce counts the contracts it created; its balance can
 * move by its code, so only the nonce is searched there. None when nothing is there to find.
 */
function firstActiveBlock(
  client: PublicClient,
  target: Address,
  via: NonceRead,
  head: bigint,
  now: { isContract: boolean; txCount: number; balanceWei: bigint },
): Promise<Date | null> {
  if (now.isContract)
    return now.txCount > 0
      ? firstBlockWhere(
          client,
          head,
          async (block) => (await nonceOf(client, target, via, block)) > 0,
        )
      : Promise.resolve(null);
  if (now.txCount === 0 && now.balanceWei === 0n) return Promise.resolve(null);
  return firstBlockWhere(client, head, async (block) => {
    if ((await client.getBalance({ address: target, blockNumber: block })) > 0n) return true;
    return now.txCount > 0 && (await nonceOf(client, target, via, block)) > 0;
  });
}

/**
 * The first block at which `holds` (monotone: false, then true) is true, by binary search over
 * historical state, and its time; null when the node keeps no such state (a pruned node).
 */
async function firstBlockWhere(
  client: PublicClient,
  head: bigint,
  holds: (block: bigint) => Promise<boolean>,
): Promise<Date | null> {
  try {
    let lo = 0n;
    let hi = head;
    while (lo < hi) {
      const mid = (lo + hi) / 2n;
      if (await holds(mid)) hi = mid;
      else lo = mid + 1n;
    }
    return await blockTime(client, lo);
  } catch {
    return null;
  }
}

async function blockTime(client: PublicClient, blockNumber: bigint): Promise<Date | null> {
  try {
    const block = await client.getBlock({ blockNumber });
    return new Date(Number(block.timestamp) * 1000);
  } catch {
    return null;
  }
}

async function tokenMeta(
  client: PublicClient,
  address: Address,
): Promise<{ symbol: string | null; name: string | null } | null> {
  const read = (functionName: 'symbol' | 'name') =>
    client.readContract({ address, abi: ERC20_META, functionName }).then(
      (value) => value,
      () => null,
    );
  const [symbol, name] = await Promise.all([read('symbol'), read('name')]);
  return symbol === null && name === null ? null : { symbol, name };
}
