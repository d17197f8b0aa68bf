import type { WindowBlock } from '../cursors/chain-state.repository';
import { findCommonAncestor } from './common-ancestor';

const block = (number: number, branch: string): WindowBlock => ({
  number,
  hash: `0x${branch}${number}`,
  parentHash: `0x${branch}${number - 1}`,
  timestamp: number,
});

/** Our window is 10..20 on branch "a"; the node forked after `forkAt` onto branch "b". */
function setup(forkAt: number) {
  const window = new Map<number, WindowBlock>();
  for (let n = 10; n <= 20; n++) window.set(n, block(n, 'a'));
  const asked: number[] = [];
  const hashAt = async (n: number) => {
    asked.push(n);
    return n <= forkAt ? `0xa${n}` : `0xb${n}`;
  };
  return { window, hashAt, asked };
}

describe('findCommonAncestor', () => {
  it.each([
    [19, 20, [20]],
    [17, 21, [20, 19, 18]],
    [10, 21, [20, 19, 18, 17, 16, 15, 14, 13, 12, 11]],
  ])('fork after %i, new block %i: removes %j newest first', async (forkAt, below, removed) => {
    const { window, hashAt } = setup(forkAt);
    const result = await findCommonAncestor(window, below, hashAt);
    expect(result.kind).toBe('found');
    if (result.kind !== 'found') return;
    expect(result.ancestor.number).toBe(forkAt);
    expect(result.removed.map((b) => b.number)).toEqual(removed);
  });

  it('walks back from just under the new block and stops at the ancestor', async () => {
    const { window, hashAt, asked } = setup(17);
    await findCommonAncestor(window, 21, hashAt);
    expect(asked).toEqual([20, 19, 18, 17]);
  });

  it('a node behind us (new head below our cursor): blocks above it are orphaned too', async () => {
    const { window, hashAt } = setup(15);
    const result = await findCommonAncestor(window, 17, hashAt);
    expect(result.kind === 'found' && result.removed.map((b) => b.number)).toEqual([
      20, 19, 18, 17, 16,
    ]);
  });

  it('no block of the window on the node chain: deeper than the window, every block listed', async () => {
    const { window, hashAt } = setup(5);
    const result = await findCommonAncestor(window, 21, hashAt);
    expect(result.kind).toBe('deeper_than_window');
    expect(result.removed.map((b) => b.number)).toEqual([
      20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10,
    ]);
  });
});
