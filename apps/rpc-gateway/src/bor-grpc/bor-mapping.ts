import type { MessageInitShape } from '@bufbuild/protobuf';
import { bor, borCommon } from '@meridian/contracts';

/**
 * JSON-RPC (hex strings) ⇄ Bor's protobuf shapes. H256 = hi.hi|hi.lo|lo.hi|lo.lo and
 * H160 = hi.hi|hi.lo|lo (big-endian words), as in Bor's common/common.proto.
 */
type H128Init = MessageInitShape<typeof borCommon.H128Schema>;
type H160Init = MessageInitShape<typeof borCommon.H160Schema>;
type H256Init = MessageInitShape<typeof borCommon.H256Schema>;
export type HeaderInit = MessageInitShape<typeof bor.HeaderSchema>;
export type ReceiptInit = MessageInitShape<typeof bor.ReceiptSchema>;

const word = (hex: string, at: number): bigint => BigInt(`0x${hex.slice(at * 16, at * 16 + 16)}`);

function bytesHex(value: unknown, bytes: number): string | undefined {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]*$/.test(value) || value.length - 2 > bytes * 2)
    return undefined;
  return value.slice(2).padStart(bytes * 2, '0');
}

export function toH256(value: unknown): H256Init | undefined {
  const hex = bytesHex(value, 32);
  if (hex === undefined) return undefined;
  return { Hi: { Hi: word(hex, 0), Lo: word(hex, 1) }, Lo: { Hi: word(hex, 2), Lo: word(hex, 3) } };
}

export function toH160(value: unknown): H160Init | undefined {
  const hex = bytesHex(value, 20);
  if (hex === undefined) return undefined;
  return { Hi: { Hi: word(hex, 0), Lo: word(hex, 1) }, Lo: Number.parseInt(hex.slice(32, 40), 16) };
}

const hex16 = (v: bigint | undefined) => (v ?? 0n).toString(16).padStart(16, '0');

export function fromH256(h: { Hi?: H128Init; Lo?: H128Init } | undefined): string {
  return `0x${hex16(h?.Hi?.Hi)}${hex16(h?.Hi?.Lo)}${hex16(h?.Lo?.Hi)}${hex16(h?.Lo?.Lo)}`;
}

export function fromH160(h: { Hi?: H128Init; Lo?: number } | undefined): string {
  return `0x${hex16(h?.Hi?.Hi)}${hex16(h?.Hi?.Lo)}${(h?.Lo ?? 0).toString(16).padStart(8, '0')}`;
}

const u64 = (value: unknown): bigint =>
  typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value) ? BigInt(value) : 0n;

function bytes(value: unknown): Uint8Array {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]*$/.test(value)) return new Uint8Array();
  const hex = value.length % 2 === 0 ? value.slice(2) : `0${value.slice(2)}`;
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

/** Big-endian minimal bytes of a quantity (difficulty, baseFee), as go-ethereum's big.Int.Bytes(). */
function quantityBytes(value: unknown): Uint8Array {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]+$/.test(value)) return new Uint8Array();
  const n = BigInt(value);
  if (n === 0n) return new Uint8Array();
  const hex = n.toString(16);
  return Uint8Array.from(Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex'));
}

/** The largest block number a node takes (a uint64: Bor answers "number too large to fit …"). */
export const MAX_BLOCK_NUMBER = 2n ** 64n - 1n;

/**
 * A block-number argument of BorApi: decimal or 0x-hex up to `MAX_BLOCK_NUMBER`, or a tag
 * ("latest", "earliest", "pending", "safe", "finalized"). undefined when malformed, empty
 * included: Bor answers an empty number "invalid block number", and reading it as latest
 * answered a client that forgot the field with the head; a number past a uint64 went to the node
 * and was billed for its refusal (QA AB).
 */
export function toBlockTag(number: string): string | undefined {
  const text = number.trim();
  if (['latest', 'earliest', 'pending', 'safe', 'finalized'].includes(text)) return text;
  if (!/^(0x[0-9a-fA-F]+|[0-9]+)$/.test(text)) return undefined;
  const value = BigInt(text);
  return value <= MAX_BLOCK_NUMBER ? `0x${value.toString(16)}` : undefined;
}

export function toHeader(block: Record<string, unknown>): HeaderInit {
  const header: HeaderInit = {
    number: u64(block['number']),
    parentHash: toH256(block['parentHash']),
    time: u64(block['timestamp']),
    uncleHash: toH256(block['sha3Uncles']),
    coinbase: toH160(block['miner']),
    stateRoot: toH256(block['stateRoot']),
    txRoot: toH256(block['transactionsRoot']),
    receiptRoot: toH256(block['receiptsRoot']),
    bloom: bytes(block['logsBloom']),
    difficulty: quantityBytes(block['difficulty']),
    gasLimit: u64(block['gasLimit']),
    gasUsed: u64(block['gasUsed']),
    extraData: bytes(block['extraData']),
    mixDigest: toH256(block['mixHash']),
    nonce: bytes(block['nonce']),
    baseFee: quantityBytes(block['baseFeePerGas']),
    withdrawalsHash: toH256(block['withdrawalsRoot']),
    parentBeaconBlockRoot: toH256(block['parentBeaconBlockRoot']),
    requestsHash: toH256(block['requestsHash']),
  };
  if (typeof block['blobGasUsed'] === 'string') header.blobGasUsed = u64(block['blobGasUsed']);
  if (typeof block['excessBlobGas'] === 'string')
    header.excessBlobGas = u64(block['excessBlobGas']);
  return header;
}

const i64 = (value: unknown): bigint => {
  const v = u64(value);
  return v > 0x7fffffffffffffffn ? 0x7fffffffffffffffn : v;
};

export function toReceipt(receipt: Record<string, unknown>): ReceiptInit {
  const logs = Array.isArray(receipt['logs']) ? (receipt['logs'] as Record<string, unknown>[]) : [];
  return {
    type: u64(receipt['type']),
    postState: bytes(receipt['root']),
    status: u64(receipt['status']),
    cumulativeGasUsed: u64(receipt['cumulativeGasUsed']),
    bloom: { bloom: bytes(receipt['logsBloom']) },
    logs: logs.map((log) => ({
      address: toH160(log['address']),
      topics: (Array.isArray(log['topics']) ? log['topics'] : [])
        .map((t) => toH256(t)!)
        .filter(Boolean),
      data: bytes(log['data']),
      blockNumber: u64(log['blockNumber']),
      txHash: toH256(log['transactionHash']),
      txIndex: u64(log['transactionIndex']),
      blockHash: toH256(log['blockHash']),
      index: u64(log['logIndex']),
      removed: log['removed'] === true,
    })),
    txHash: toH256(receipt['transactionHash']),
    contractAddress: toH160(receipt['contractAddress']),
    gasUsed: u64(receipt['gasUsed']),
    effectiveGasPrice: i64(receipt['effectiveGasPrice']),
    blobGasUsed: u64(receipt['blobGasUsed']),
    blobGasPrice: i64(receipt['blobGasPrice']),
    blockHash: toH256(receipt['blockHash']),
    blockNumber: i64(receipt['blockNumber']),
    transactionIndex: u64(receipt['transactionIndex']),
  };
}

/** totalDifficulty as uint64 (Bor's field); undefined when the node does not report it. */
export function totalDifficultyOf(block: Record<string, unknown>): bigint | undefined {
  const td = block['totalDifficulty'];
  if (typeof td !== 'string' || !/^0x[0-9a-fA-F]+$/.test(td)) return undefined;
  const value = BigInt(td);
  return value > 0xffffffffffffffffn ? 0xffffffffffffffffn : value;
}
