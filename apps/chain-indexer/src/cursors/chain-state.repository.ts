import type { DataSource } from 'typeorm';

export interface WindowBlock {
  readonly number: number;
  readonly hash: string;
  readonly parentHash: string;
  /** Unix seconds. */
  readonly timestamp: number;
}

export interface ChainState {
  /** Newest published block (the cursor), undefined before the first one. */
  readonly head: WindowBlock | undefined;
  readonly generation: number;
  /** Recent blocks by number (the reorg window), the head included. */
  readonly window: Map<number, WindowBlock>;
}

/** The fencing check failed: another replica took the network over (its lease revision is newer). */
export class LeaseFencedError extends Error {
  constructor(network: string) {
    super(`${network}: the cursor is fenced by a newer leader`);
    this.name = 'LeaseFencedError';
  }
}

interface BlockRow {
  number: string;
  hash: string;
  parent_hash: string;
  timestamp: string;
}

/**
 * The persisted cursor and block hashes of each network: the reorg window, and below it the
 * longer block history (`HISTORY_BLOCKS`, number and hashes only) a deep reorg walks down to
 * find its real common ancestor. Every write is one transaction that also checks the fencing
 * revision, so a replica that lost its lease cannot move the cursor.
 */
export class ChainStateRepository {
  constructor(private readonly db: DataSource) {}

  /** The cursor and the window's blocks (`windowBlocks` up to the cursor; the history stays). */
  async load(network: string, windowBlocks: number): Promise<ChainState> {
    const cursors: Array<{ head_number: string; head_hash: string; generation: number }> =
      await this.db.query(
        'SELECT head_number, head_hash, generation FROM indexer.cursors WHERE network = $1',
        [network],
      );
    const cursor = cursors[0];
    const from = cursor ? Number(cursor.head_number) - windowBlocks : -1;
    const rows: BlockRow[] = await this.db.query(
      `SELECT number, hash, parent_hash, timestamp FROM indexer.blocks
       WHERE network = $1 AND number > $2 ORDER BY number`,
      [network, from],
    );
    const window = new Map<number, WindowBlock>(rows.map((r) => [Number(r.number), blockOf(r)]));
    return {
      head: cursor ? window.get(Number(cursor.head_number)) : undefined,
      generation: cursor?.generation ?? 0,
      window,
    };
  }

  /** The stored blocks below `below` (the history under the window), newest first. */
  async history(network: string, below: number): Promise<WindowBlock[]> {
    const rows: BlockRow[] = await this.db.query(
      `SELECT number, hash, parent_hash, timestamp FROM indexer.blocks
       WHERE network = $1 AND number < $2 ORDER BY number DESC`,
      [network, below],
    );
    return rows.map(blockOf);
  }

  /** The stored block at `number` (window or history), if any. */
  async blockAt(network: string, number: number): Promise<WindowBlock | undefined> {
    const rows: BlockRow[] = await this.db.query(
      `SELECT number, hash, parent_hash, timestamp FROM indexer.blocks
       WHERE network = $1 AND number = $2`,
      [network, number],
    );
    return rows[0] ? blockOf(rows[0]) : undefined;
  }

  /**
   * Takes the network's cursor for a lease revision (creating the row on first use). Fails
   * with LeaseFencedError when a newer revision already holds it.
   */
  async claim(network: string, leaseRevision: number, now: Date): Promise<void> {
    const rows: unknown[] = await this.db.query(
      `INSERT INTO indexer.cursors (network, head_number, head_hash, generation, leader_revision, updated_at)
       VALUES ($1, 0, '', 0, $2, $3)
       ON CONFLICT (network) DO UPDATE SET leader_revision = EXCLUDED.leader_revision
         WHERE indexer.cursors.leader_revision <= EXCLUDED.leader_revision
       RETURNING network`,
      [network, leaseRevision, now],
    );
    if (rows.length === 0) throw new LeaseFencedError(network);
  }

  /** Records a published block as the new cursor and drops what fell out of the history. */
  async advance(
    network: string,
    block: WindowBlock,
    keepBlocks: number,
    leaseRevision: number,
    now: Date,
  ): Promise<void> {
    await this.db.transaction(async (tx) => {
      const updated: unknown[] = await tx.query(
        `UPDATE indexer.cursors SET head_number = $2, head_hash = $3, updated_at = $4
         WHERE network = $1 AND leader_revision = $5 RETURNING network`,
        [network, block.number, block.hash, now, leaseRevision],
      );
      if (updated.length === 0) throw new LeaseFencedError(network);
      await tx.query(
        `INSERT INTO indexer.blocks (network, number, hash, parent_hash, timestamp)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (network, number) DO UPDATE
           SET hash = EXCLUDED.hash, parent_hash = EXCLUDED.parent_hash, timestamp = EXCLUDED.timestamp`,
        [network, block.number, block.hash, block.parentHash, block.timestamp],
      );
      await tx.query('DELETE FROM indexer.blocks WHERE network = $1 AND number <= $2', [
        network,
        block.number - keepBlocks,
      ]);
    });
  }

  /**
   * After a published removal: the cursor goes back to the common ancestor, the orphaned blocks
   * leave the window, and the generation moves on (new message ids from here). `unlinked`: the
   * ancestor is the node's block, not one we published (a reorg deeper than the history), so
   * the blocks stored below it are of another chain and are dropped too.
   */
  async rewind(
    network: string,
    ancestor: WindowBlock,
    generation: number,
    leaseRevision: number,
    now: Date,
    unlinked = false,
  ): Promise<void> {
    await this.db.transaction(async (tx) => {
      const updated: unknown[] = await tx.query(
        `UPDATE indexer.cursors SET head_number = $2, head_hash = $3, generation = $4, updated_at = $5
         WHERE network = $1 AND leader_revision = $6 RETURNING network`,
        [network, ancestor.number, ancestor.hash, generation, now, leaseRevision],
      );
      if (updated.length === 0) throw new LeaseFencedError(network);
      await tx.query(
        `DELETE FROM indexer.blocks WHERE network = $1 AND (number > $2 OR ($3::boolean AND number < $2))`,
        [network, ancestor.number, unlinked],
      );
      // A resync's ancestor lies below the window: it becomes the window's one entry.
      await tx.query(
        `INSERT INTO indexer.blocks (network, number, hash, parent_hash, timestamp)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (network, number) DO NOTHING`,
        [network, ancestor.number, ancestor.hash, ancestor.parentHash, ancestor.timestamp],
      );
    });
  }
}

function blockOf(row: BlockRow): WindowBlock {
  return {
    number: Number(row.number),
    hash: row.hash,
    parentHash: row.parent_hash,
    timestamp: Number(row.timestamp),
  };
}
