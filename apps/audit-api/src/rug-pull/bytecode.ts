/** Facts read from EVM runtime code without executing it. */
export interface BytecodeFacts {
  /**
   * Four-byte values a PUSH4 compares with the call's selector (the dispatcher's: `DUP1 PUSH4 s
   * EQ`, its binary search's `GT`/`LT`, Vyper's `XOR`), 0x-prefixed. A PUSH4 that builds the
   * calldata of a call to another contract (`pair.mint(to)` in a router) is not this contract's
   * function, nor is any selector inside an embedded contract's creation code (a factory's
   * `new Pair()`), which is data the code copies, never runs.
   */
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

const PUSH0 = 0x5f;
const PUSH1 = 0x60;
const PUSH32 = 0x7f;
const PUSH4 = 0x63;
const SELFDESTRUCT = 0xff;
const DELEGATECALL = 0xf4;
const INVALID = 0xfe;
const MLOAD = 0x51;
/** Comparisons a dispatcher makes between the call's selector and one of its own. */
const SELECTOR_COMPARISONS = new Set([0x14, 0x11, 0x10, 0x18, 0x03]); // EQ GT LT XOR SUB
const isDupOrSwap = (op: number) => op >= 0x80 && op <= 0x9f;
/**
 * solc ends a contract's code with INVALID before its data when the data holds the creation code
 * of a contract it deploys; creation code starts `PUSH1 0x80 PUSH1 0x40 MSTORE` (0x60 before
 * solc 0.4.22).
 */
const CREATION_CODE_STARTS = ['6080604052', '6060604052'];

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
  readonly pc: number;
  readonly op: number;
  /** Immediate of a PUSH (PUSH0 included). */
  readonly value?: bigint;
}

const hexOf = (bytes: Uint8Array) =>
  `0x${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;

/** Walks the opcodes (skipping PUSH data, so constants never read as opcodes). */
export function analyzeBytecode(code: string): BytecodeFacts {
  const bytes = withoutMetadata(toBytes(code));
  const ops: Op[] = [];
  let hasSelfdestruct = false;
  let hasDelegatecall = false;
  for (let pc = 0; pc < bytes.length; pc += 1) {
    const op = bytes[pc]!;
    if (op >= PUSH1 && op <= PUSH32) {
      const size = op - PUSH1 + 1;
      const data = bytes.subarray(pc + 1, pc + 1 + size);
      ops.push({ pc, op, value: data.length ? BigInt(hexOf(data)) : 0n });
      pc += size;
    } else {
      // What follows is an embedded contract's creation code: data, not this contract's code.
      if (
        op === INVALID &&
        CREATION_CODE_STARTS.includes(hexOf(bytes.subarray(pc + 1, pc + 6)).slice(2))
      )
        break;
      if (op === SELFDESTRUCT) hasSelfdestruct = true;
      else if (op === DELEGATECALL) hasDelegatecall = true;
      ops.push(op === PUSH0 ? { pc, op, value: 0n } : { pc, op });
    }
  }
  const guards = callerGuards(ops);
  return {
    selectors: dispatcherSelectors(ops),
    hasSelfdestruct,
    hasDelegatecall,
    size: bytes.length,
    callerCheckedSlots: guards.slots,
    callerCheckedAddresses: guards.addresses,
  };
}

/**
 * PUSH4 values compared with the call's selector: the next instructions, past DUP/SWAP (and
 * Vyper's `PUSH1 0 MLOAD` of the selector it stored), are a comparison. A selector pushed for a
 * call of another contract is shifted (`PUSH1 0xe0 SHL`) and stored instead.
 */
function dispatcherSelectors(ops: readonly Op[]): string[] {
  const selectors = new Set<string>();
  for (let i = 0; i < ops.length; i += 1) {
    if (ops[i]!.op !== PUSH4) continue;
    let j = i + 1;
    while (j < ops.length && j <= i + 2 && isDupOrSwap(ops[j]!.op)) j += 1;
    const next = ops[j];
    const afterLoad =
      next !== undefined &&
      next.op >= PUSH0 &&
      next.op <= PUSH32 &&
      ops[j + 1]?.op === MLOAD &&
      ops[j + 2] !== undefined &&
      SELECTOR_COMPARISONS.has(ops[j + 2]!.op);
    if ((next !== undefined && SELECTOR_COMPARISONS.has(next.op)) || afterLoad)
      selectors.add(`0x${ops[i]!.value!.toString(16).padStart(8, '0')}`);
  }
  return [...selectors];
}

/** What the guard search knows of a stack word. */
type Word =
  | { readonly k: 'const'; readonly v: bigint }
  | { readonly k: 'caller' }
  | { readonly k: 'sload'; readonly slot: bigint }
  | { readonly k: 'other' };

const OTHER: Word = { k: 'other' };
const CALLER_WORD: Word = { k: 'caller' };
const WORD = (1n << 256n) - 1n;
const ADDRESS_MASK = (1n << 160n) - 1n;
/** Path states kept per instruction, and instructions run in all: bounds the walk on any code. */
const STATES_PER_OP = 4;
const STEP_BUDGET = 400_000;

/** [words popped, words pushed] of the opcodes the walk does not model one by one. */
function stackEffect(op: number): [number, number] | null {
  if (op >= 0x01 && op <= 0x07) return [2, 1]; // ADD … SMOD
  if (op === 0x08 || op === 0x09) return [3, 1]; // ADDMOD, MULMOD
  if (op === 0x0a || op === 0x0b) return [2, 1]; // EXP, SIGNEXTEND
  if (op >= 0x10 && op <= 0x14) return [2, 1]; // LT GT SLT SGT EQ
  if (op === 0x15 || op === 0x19) return [1, 1]; // ISZERO, NOT
  if ((op >= 0x16 && op <= 0x18) || (op >= 0x1a && op <= 0x1d)) return [2, 1];
  if (op === 0x20) return [2, 1]; // KECCAK256
  if ([0x30, 0x32, 0x33, 0x34, 0x36, 0x38, 0x3a, 0x3d].includes(op)) return [0, 1];
  if ([0x31, 0x35, 0x3b, 0x3f, 0x40, 0x49].includes(op)) return [1, 1];
  if (op === 0x37 || op === 0x39 || op === 0x3e || op === 0x5e) return [3, 0];
  if (op === 0x3c) return [4, 0];
  if ((op >= 0x41 && op <= 0x48) || op === 0x4a) return [0, 1];
  if (op === 0x50) return [1, 0]; // POP
  if (op === 0x51 || op === 0x54 || op === 0x5c) return [1, 1]; // MLOAD SLOAD TLOAD
  if (op === 0x52 || op === 0x53 || op === 0x55 || op === 0x5d) return [2, 0];
  if (op >= 0x58 && op <= 0x5a) return [0, 1]; // PC MSIZE GAS
  if (op >= 0xa0 && op <= 0xa4) return [2 + op - 0xa0, 0]; // LOG0-4
  if (op === 0xf0) return [3, 1];
  if (op === 0xf1 || op === 0xf2) return [7, 1];
  if (op === 0xf4 || op === 0xfa) return [6, 1];
  if (op === 0xf5) return [4, 1];
  return null;
}

const isConst = (w: Word): w is { k: 'const'; v: bigint } => w.k === 'const';
const tainted = (w: Word) => w.k === 'caller' || w.k === 'sload';

/** The word an arithmetic opcode yields: constants fold, masks and shifts keep what they read. */
function arithmetic(op: number, a: Word, b: Word): Word {
  if (isConst(a) && isConst(b)) {
    const x = a.v;
    const y = b.v;
    switch (op) {
      case 0x01:
        return { k: 'const', v: (x + y) & WORD };
      case 0x02:
        return { k: 'const', v: (x * y) & WORD };
      case 0x03:
        return { k: 'const', v: (x - y) & WORD };
      case 0x04:
        return { k: 'const', v: y === 0n ? 0n : x / y };
      case 0x0a:
        return { k: 'const', v: y > 256n ? 0n : (x ** y) & WORD };
      case 0x16:
        return { k: 'const', v: x & y };
      case 0x17:
        return { k: 'const', v: x | y };
      case 0x1b:
        return { k: 'const', v: x >= 256n ? 0n : (y << x) & WORD };
      case 0x1c:
        return { k: 'const', v: x >= 256n ? 0n : y >> x };
      default:
        return OTHER;
    }
  }
  // AND with a mask, DIV by 2^k or SHR by k: an address read from a packed slot, or CALLER masked.
  if (op === 0x16 && isConst(a) && tainted(b)) return b;
  if (op === 0x16 && isConst(b) && tainted(a)) return a;
  if (op === 0x04 && isConst(b) && tainted(a)) return a;
  if (op === 0x1c && isConst(a) && tainted(b)) return b;
  return OTHER;
}

/**
 * Finds comparisons of CALLER with a value read from storage (`SLOAD` of a constant slot, packed
 * or not) or with an address constant, wherever they happen: an abstract run of the code along
 * its jumps (internal functions included, as unoptimised code calls `owner()` and `_msgSender()`),
 * tracking only where each stack word came from. This is how an access check looks in bytecode
 * whatever the compiler, its settings (PUSH0, optimiser on or off) or the function names, so it
 * finds admins that have no `owner()` getter.
 */
function callerGuards(ops: readonly Op[]): { slots: string[]; addresses: string[] } {
  const slots = new Set<string>();
  const addresses = new Set<string>();
  const indexOfPc = new Map<number, number>();
  ops.forEach((o, i) => indexOfPc.set(o.pc, i));
  const jumpdest = (target: Word): number | undefined => {
    if (!isConst(target) || target.v > 0xffffffn) return undefined;
    const i = indexOfPc.get(Number(target.v));
    return i !== undefined && ops[i]!.op === 0x5b ? i : undefined;
  };
  const compare = (a: Word, b: Word) => {
    const [caller, other] = a.k === 'caller' ? [a, b] : [b, a];
    if (caller.k !== 'caller') return;
    if (other.k === 'sload') slots.add(`0x${other.slot.toString(16)}`);
    else if (isConst(other) && other.v !== 0n && other.v < ADDRESS_MASK)
      addresses.add(`0x${other.v.toString(16).padStart(40, '0')}`);
  };
  const seen = new Map<number, Set<string>>();
  const signature = (stack: readonly Word[]) =>
    stack
      .map((w) => (w.k === 'const' ? w.v.toString(36) : w.k === 'sload' ? `s${w.slot}` : w.k[0]))
      .join(',');
  const queue: Array<{ i: number; stack: Word[] }> = [{ i: 0, stack: [] }];
  let steps = 0;
  while (queue.length > 0 && steps < STEP_BUDGET) {
    const state = queue.pop()!;
    const stack = state.stack;
    let i = state.i;
    const enqueue = (next: number | undefined, s: Word[]) => {
      if (next === undefined || next >= ops.length) return;
      const key = signature(s);
      const states = seen.get(next) ?? new Set<string>();
      if (states.has(key) || states.size >= STATES_PER_OP) return;
      states.add(key);
      seen.set(next, states);
      queue.push({ i: next, stack: s });
    };
    const pop = (): Word => stack.pop() ?? OTHER;
    walk: while (i < ops.length && steps < STEP_BUDGET) {
      steps += 1;
      const { op, value } = ops[i]!;
      if (value !== undefined) stack.push({ k: 'const', v: value });
      else if (op >= 0x80 && op <= 0x8f) {
        const n = op - 0x7f;
        stack.push(stack[stack.length - n] ?? OTHER);
      } else if (op >= 0x90 && op <= 0x9f) {
        const n = op - 0x8f;
        const top = stack.length - 1;
        if (top - n < 0) stack.unshift(...Array<Word>(n - top).fill(OTHER));
        const t = stack.length - 1;
        [stack[t], stack[t - n]] = [stack[t - n]!, stack[t]!];
      } else if (op === 0x33) stack.push(CALLER_WORD);
      else if (op === 0x54) {
        const key = pop();
        stack.push(isConst(key) ? { k: 'sload', slot: key.v } : OTHER);
      } else if (op === 0x14) {
        const a = pop();
        const b = pop();
        compare(a, b);
        stack.push(OTHER);
      } else if ([0x01, 0x02, 0x03, 0x04, 0x0a, 0x16, 0x17, 0x1b, 0x1c].includes(op)) {
        const a = pop();
        const b = pop();
        stack.push(arithmetic(op, a, b));
      } else if (op === 0x56) {
        enqueue(jumpdest(pop()), stack);
        break walk;
      } else if (op === 0x57) {
        const target = pop();
        pop();
        enqueue(jumpdest(target), [...stack]);
        enqueue(i + 1, stack);
        break walk;
      } else if ([0x00, 0xf3, 0xfd, 0xfe, 0xff].includes(op)) break walk;
      else if (op === 0x5b) {
        // A block reached by falling through: join the states seen here.
        if (i !== state.i) {
          enqueue(i, stack);
          break walk;
        }
      } else {
        const effect = stackEffect(op);
        if (!effect) break walk; // an opcode this walk does not know: end of this path
        for (let n = 0; n < effect[0]; n += 1) pop();
        for (let n = 0; n < effect[1]; n += 1) stack.push(OTHER);
      }
      if (stack.length > 1024) break walk;
      i += 1;
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
