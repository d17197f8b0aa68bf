/** Facts read from EVM runtime code without executing it. */
export interface BytecodeFacts {
  /** Four-byte values pushed with PUSH4 (the dispatcher's selectors and a few constants), 0x-prefixed. */
  readonly selectors: string[];
  readonly hasSelfdestruct: boolean;
  readonly hasDelegatecall: boolean;
  /** Size of the code without the trailing CBOR metadata. */
  readonly size: number;
  /**
   * Storage slots (0x hex) whose value the code compares with CALLER: where an admin address
   * lives, whatever the guarding function is called (`onlyOwner`, `onlyDev`, `auth`…).
   */
  readonly callerCheckedSlots: string[];
  /** Addresses embedded in the code (immutables, constants) that the code compares with CALLER. */
  readonly callerCheckedAddresses: string[];
}

const PUSH1 = 0x60;
const PUSH32 = 0x7f;
const PUSH4 = 0x63;
const PUSH20 = 0x73;
const SELFDESTRUCT = 0xff;
const DELEGATECALL = 0xf4;
const CALLER = 0x33;
const SLOAD = 0x54;
const EQ = 0x14;
/** Opcodes on either side of CALLER searched for the compared value and the EQ. */
const GUARD_WINDOW = 8;

function toBytes(code: string): Uint8Array {
  const hex = code.startsWith('0x') ? code.slice(2) : code;
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i += 1) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

/** Solidity appends CBOR metadata whose length sits in the last two bytes; its bytes are not code. */
function withoutMetadata(bytes: Uint8Array): Uint8Array {
  if (bytes.length < 2) return bytes;
  const length = (bytes[bytes.length - 2]! << 8) | bytes[bytes.length - 1]!;
  const start = bytes.length - 2 - length;
  if (length > 0 && start >= 0 && (bytes[start] === 0xa1 || bytes[start] === 0xa2))
    return bytes.subarray(0, start);
  return bytes;
}

interface Op {
  readonly op: number;
  /** Immediate of a PUSH, as 0x hex. */
  readonly value?: string;
}

const hexOf = (bytes: Uint8Array) =>
  `0x${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;

/** Walks the opcodes (skipping PUSH data, so constants never read as opcodes). */
export function analyzeBytecode(code: string): BytecodeFacts {
  const bytes = withoutMetadata(toBytes(code));
  const selectors = new Set<string>();
  const ops: Op[] = [];
  let hasSelfdestruct = false;
  let hasDelegatecall = false;
  for (let pc = 0; pc < bytes.length; pc += 1) {
    const op = bytes[pc]!;
    if (op >= PUSH1 && op <= PUSH32) {
      const size = op - PUSH1 + 1;
      const value = hexOf(bytes.subarray(pc + 1, pc + 1 + size));
      if (op === PUSH4 && pc + 4 < bytes.length) selectors.add(value);
      ops.push({ op, value });
      pc += size;
    } else {
      if (op === SELFDESTRUCT) hasSelfdestruct = true;
      else if (op === DELEGATECALL) hasDelegatecall = true;
      ops.push({ op });
    }
  }
  const guards = callerGuards(ops);
  return {
    selectors: [...selectors],
    hasSelfdestruct,
    hasDelegatecall,
    size: bytes.length,
    callerCheckedSlots: guards.slots,
    callerCheckedAddresses: guards.addresses,
  };
}

/**
 * Finds `CALLER … EQ` comparisons and what they compare against: a storage slot read by
 * `PUSH slot SLOAD` or an address pushed by PUSH20, within a few opcodes of the CALLER. This is
 * how an access check looks in bytecode whatever the compiler or the function names, so it
 * finds admins that have no `owner()` getter.
 */
function callerGuards(ops: readonly Op[]): { slots: string[]; addresses: string[] } {
  const slots = new Set<string>();
  const addresses = new Set<string>();
  for (let i = 0; i < ops.length; i += 1) {
    if (ops[i]!.op !== CALLER) continue;
    const from = Math.max(0, i - GUARD_WINDOW);
    const to = Math.min(ops.length, i + GUARD_WINDOW + 1);
    let compared = false;
    for (let j = i + 1; j < to; j += 1) if (ops[j]!.op === EQ) compared = true;
    if (!compared) continue;
    for (let j = from; j < to; j += 1) {
      const o = ops[j]!;
      if (o.op === SLOAD && j > 0 && ops[j - 1]!.value !== undefined) {
        const slot = ops[j - 1]!.value!;
        if (slot.length <= 2 + 2 * 32) slots.add(`0x${BigInt(slot).toString(16)}`);
      }
      if (o.op === PUSH20 && o.value && BigInt(o.value) !== 0n && !/^0xf{40}$/i.test(o.value))
        addresses.add(o.value.toLowerCase());
    }
  }
  return { slots: [...slots], addresses: [...addresses] };
}

/** EIP-1967 implementation slot: bytes32(uint256(keccak256("eip1967.proxy.implementation")) - 1). */
export const EIP1967_IMPLEMENTATION_SLOT =
  '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';
/** EIP-1967 beacon slot. */
export const EIP1967_BEACON_SLOT =
  '0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50';
/** EIP-1167 minimal proxy prefix. */
export const EIP1167_PREFIX = '0x363d3d373d3d3d363d73';
