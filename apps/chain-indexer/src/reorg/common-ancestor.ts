import type { WindowBlock } from '../cursors/chain-state.repository';

export type AncestorSearch =
  | { kind: 'found'; ancestor: WindowBlock; removed: WindowBlock[] }
  /** No block of the window is on the node's chain: the reorg is deeper than the window. */
  | { kind: 'deeper_than_window'; removed: WindowBlock[] };

/**
 * Walks back from `below - 1` through the window until the node's block at a height has the
 * hash we published there: that block is the common ancestor; every window block above it was
 * orphaned (returned newest first). `hashAt` asks the node.
 */
export async function findCommonAncestor(
  window: ReadonlyMap<number, WindowBlock>,
  below: number,
  hashAt: (number: number) => Promise<string | undefined>,
): Promise<AncestorSearch> {
  const heights = [...window.keys()].filter((n) => n < below).sort((a, b) => b - a);
  const orphaned = (ancestor: number) =>
    [...window.values()].filter((b) => b.number > ancestor).sort((a, b) => b.number - a.number);
  for (const height of heights) {
    const ours = window.get(height)!;
    const theirs = await hashAt(height);
    if (theirs !== undefined && theirs.toLowerCase() === ours.hash.toLowerCase())
      return { kind: 'found', ancestor: ours, removed: orphaned(height) };
  }
  return { kind: 'deeper_than_window', removed: orphaned(-1) };
}
