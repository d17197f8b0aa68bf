/** Facts read from EVM runtime code without executing it. */
export interface BytecodeFacts {
  /** Four-byte values pushed with PUSH4 (the dispatcher's selectors and a few constants), 0x-prefixed. */
  readonly selectors: string[];
  readonly hasSelfdestruct: boolean;
  readonly hasDelegatecall: boolean;
  /** Size of the code without the trailing CBOR metadata. */
  readonly size: number;
}

const PUSH1 = 0x60;
const PUSH32 = 0x7f;
const PUSH4 = 0x63;
const SELFDESTRUCT = 0xff;
const DELEGATECALL = 0xf4;

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

/** Walks the opcodes (skipping PUSH data, so constants never read as opcodes). */
export function analyzeBytecode(code: string): BytecodeFacts {
  const bytes = withoutMetadata(toBytes(code));
  const selectors = new Set<string>();
  let hasSelfdestruct = false;
  let hasDelegatecall = false;
  for (let pc = 0; pc < bytes.length; pc += 1) {
    const op = bytes[pc]!;
    if (op >= PUSH1 && op <= PUSH32) {
      const size = op - PUSH1 + 1;
      if (op === PUSH4 && pc + 4 < bytes.length) {
        selectors.add(
          `0x${Array.from(bytes.subarray(pc + 1, pc + 5), (b) => b.toString(16).padStart(2, '0')).join('')}`,
        );
      }
      pc += size;
    } else if (op === SELFDESTRUCT) hasSelfdestruct = true;
    else if (op === DELEGATECALL) hasDelegatecall = true;
  }
  return { selectors: [...selectors], hasSelfdestruct, hasDelegatecall, size: bytes.length };
}

/** EIP-1967 implementation slot: bytes32(uint256(keccak256("eip1967.proxy.implementation")) - 1). */
export const EIP1967_IMPLEMENTATION_SLOT =
  '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';
/** EIP-1967 beacon slot. */
export const EIP1967_BEACON_SLOT =
  '0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50';
/** EIP-1167 minimal proxy prefix. */
export const EIP1167_PREFIX = '0x363d3d373d3d3d363d73';
