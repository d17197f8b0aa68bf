import { readFileSync } from 'node:fs';
import { analyzeBytecode } from './bytecode';

const OPCODES: Record<string, number> = {
  STOP: 0x00,
  ADD: 0x01,
  DIV: 0x04,
  EXP: 0x0a,
  EQ: 0x14,
  ISZERO: 0x15,
  AND: 0x16,
  CALLER: 0x33,
  POP: 0x50,
  SLOAD: 0x54,
  JUMP: 0x56,
  JUMPI: 0x57,
  JUMPDEST: 0x5b,
  PUSH0: 0x5f,
  DUP1: 0x80,
  SWAP1: 0x90,
  SWAP2: 0x91,
  REVERT: 0xfd,
};

/**
 * A tiny assembler: `PUSHn value`, `PUSH2 @label` (a jump target), `@label:` (a JUMPDEST there)
 * and bare opcodes, so each guard shape below reads as the compiler emits it.
 */
function assemble(source: string): string {
  const lines = source
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const size = (line: string) => {
    if (line.endsWith(':')) return 1;
    const push = /^PUSH(\d+)/.exec(line);
    return push ? 1 + Number(push[1]) : 1;
  };
  const labels = new Map<string, number>();
  let pc = 0;
  for (const line of lines) {
    if (line.endsWith(':')) labels.set(line.slice(0, -1), pc);
    pc += size(line);
  }
  let hex = '';
  for (const line of lines) {
    if (line.endsWith(':')) {
      hex += '5b';
      continue;
    }
    const [name, arg] = line.split(/\s+/);
    const push = /^PUSH(\d+)$/.exec(name!);
    if (push && push[1] !== '0') {
      const n = Number(push[1]);
      const value = arg!.startsWith('@') ? BigInt(labels.get(arg!.slice(1))!) : BigInt(arg!);
      hex += (0x5f + n).toString(16) + value.toString(16).padStart(2 * n, '0');
    } else hex += OPCODES[name!]!.toString(16).padStart(2, '0');
  }
  return `0x${hex}`;
}

const MASK = `0x${'ff'.repeat(20)}`;
const ADMIN = '0x00000000000000000000000000000000000a11ce';

describe('caller guards: where an admin address lives, whatever the compiler', () => {
  it.each([
    [
      // solc ≥ 0.8.20 optimised: `owner` in slot 0 is read with PUSH0.
      'PUSH0 SLOAD (slot 0, optimised 0.8.20+)',
      `PUSH0
       SLOAD
       PUSH20 ${MASK}
       AND
       CALLER
       EQ
       PUSH2 @ok
       JUMPI
       PUSH0
       DUP1
       REVERT
       ok:
       STOP`,
      ['0x0'],
      [],
    ],
    [
      // Unoptimised: owner() and _msgSender() are internal calls (jumps out and back), and the
      // packed slot is read with EXP/DIV and masked twice, far from the EQ.
      'unoptimised internal calls and a packed slot read',
      `PUSH2 @back1
       PUSH2 @owner
       JUMP
       back1:
       PUSH2 @back2
       PUSH2 @sender
       JUMP
       back2:
       PUSH20 ${MASK}
       AND
       SWAP1
       PUSH20 ${MASK}
       AND
       EQ
       ISZERO
       PUSH2 @denied
       JUMPI
       STOP
       denied:
       PUSH1 0
       DUP1
       REVERT
       owner:
       PUSH1 5
       PUSH1 0
       SWAP1
       SLOAD
       SWAP1
       PUSH2 0x100
       EXP
       SWAP1
       DIV
       PUSH20 ${MASK}
       AND
       SWAP1
       JUMP
       sender:
       CALLER
       SWAP1
       JUMP`,
      ['0x5'],
      [],
    ],
    [
      'an immutable admin compared with CALLER',
      `CALLER
       PUSH20 ${ADMIN}
       EQ
       PUSH2 @ok
       JUMPI
       PUSH0
       DUP1
       REVERT
       ok:
       STOP`,
      [],
      [ADMIN],
    ],
    [
      // A slot read and a CALLER that are never compared: no guard.
      'no comparison, no guard',
      `PUSH1 3
       SLOAD
       CALLER
       POP
       POP
       STOP`,
      [],
      [],
    ],
  ])('%s', (_name, source, slots, addresses) => {
    const facts = analyzeBytecode(assemble(source));
    expect(facts.callerCheckedSlots).toEqual(slots);
    expect(facts.callerCheckedAddresses).toEqual(addresses);
  });

  it('ends on any code: a loop back to itself and unknown opcodes', () => {
    const loop = assemble(`top:
       CALLER
       POP
       PUSH2 @top
       JUMP`);
    expect(analyzeBytecode(loop).callerCheckedSlots).toEqual([]);
    expect(analyzeBytecode('0x0c0d0e33541400').callerCheckedSlots).toEqual([]);
  });

  it('finds no admin in WETH9 (built by Uniswap, no owner)', () => {
    const weth = JSON.parse(
      readFileSync(require.resolve('@uniswap/v2-periphery/build/WETH9.json'), 'utf8'),
    ) as { evm: { deployedBytecode: { object: string } } };
    const facts = analyzeBytecode(weth.evm.deployedBytecode.object);
    expect(facts.callerCheckedSlots).toEqual([]);
  });
});
