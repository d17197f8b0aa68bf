import type { UpstreamUrls } from '@meridian/platform-config';
import { DomainError } from '@meridian/errors';
import { createPublicClient, http, type PublicClient } from 'viem';

/** A block as the node returned it (hex quantities), with full transaction objects. */
export interface RawBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  transactions: Array<Record<string, unknown> & { hash: string }>;
  [key: string]: unknown;
}

export type RawReceipt = Record<string, unknown> & {
  transactionHash: string;
  blockHash: string;
  logs: unknown[];
};

export interface NodeClientEvents {
  /** A node answered "method not found" to eth_getBlockReceipts; receipts are fetched per transaction. */
  onReceiptsFallback?: (url: string) => void;
  onUpstreamError?: (url: string, error: unknown) => void;
}

interface Upstream {
  readonly url: string;
  readonly client: PublicClient;
  /** Learned at run time: false once the node refused eth_getBlockReceipts as unknown. */
  blockReceipts: boolean;
}

const METHOD_NOT_FOUND = -32601;

/**
 * The largest answer read from a node. viem's default (10 MiB) is below one block's receipts on
 * today's gas limits (QA: one transaction of 43.4M gas emitting 165 logs of 32 KiB made 10.8 MB
 * of receipts, and the network stalled on "no node answered"). 256 MiB is far above what a
 * block's gas can emit and still bounds a broken node's answer.
 */
export const NODE_MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

/**
 * JSON-RPC to one network's nodes through viem, keeping the node's JSON as it is (it is
 * forwarded as `raw`). Calls go to the first healthy node; a failed call moves to the next.
 */
export class NodeClient {
  private readonly upstreams: Upstream[];
  private current = 0;

  constructor(
    readonly network: string,
    urls: readonly UpstreamUrls[],
    private readonly events: NodeClientEvents = {},
    timeoutMs = 10_000,
  ) {
    if (urls.length === 0) throw new Error(`${network}: no upstream`);
    this.upstreams = urls.map((u) => ({
      url: u.url,
      client: createPublicClient({
        transport: http(u.url, {
          timeout: timeoutMs,
          retryCount: 1,
          maxResponseBodySize: NODE_MAX_RESPONSE_BYTES,
        }),
      }),
      blockReceipts: true,
    }));
  }

  async blockNumber(): Promise<number> {
    return Number(await this.call<string>('eth_blockNumber', []));
  }

  /** The block at `number` with full transactions, or undefined when the node has none there. */
  async blockByNumber(number: number, full = true): Promise<RawBlock | undefined> {
    const block = await this.call<RawBlock | null>('eth_getBlockByNumber', [hex(number), full]);
    return block ?? undefined;
  }

  /**
   * Receipts of every transaction of `block`, in transaction order: eth_getBlockReceipts,
   * or one eth_getTransactionReceipt per transaction on a node without it. A receipt of another
   * block (the node reorganised meanwhile) fails the fetch; the caller retries from the head.
   */
  async receiptsOf(block: RawBlock): Promise<RawReceipt[]> {
    if (block.transactions.length === 0) return [];
    const receipts = await this.withUpstream(async (upstream) => {
      if (upstream.blockReceipts) {
        try {
          const all = await this.request<RawReceipt[] | null>(upstream, 'eth_getBlockReceipts', [
            block.hash,
          ]);
          if (all) return all;
        } catch (error) {
          if (!isMethodNotFound(error)) throw error;
          upstream.blockReceipts = false;
          this.events.onReceiptsFallback?.(upstream.url);
        }
      }
      return Promise.all(
        block.transactions.map((tx) =>
          this.request<RawReceipt | null>(upstream, 'eth_getTransactionReceipt', [tx.hash]),
        ),
      );
    });
    const byHash = new Map<string, RawReceipt>();
    for (const receipt of receipts) {
      if (!receipt || receipt.blockHash?.toLowerCase() !== block.hash.toLowerCase()) {
        throw new DomainError(
          'block_changed',
          'unavailable',
          `${this.network}: block ${block.hash} changed while fetching receipts`,
        );
      }
      byHash.set(receipt.transactionHash.toLowerCase(), receipt);
    }
    return block.transactions.map((tx) => {
      const receipt = byHash.get(tx.hash.toLowerCase());
      if (!receipt)
        throw new DomainError(
          'block_changed',
          'unavailable',
          `${this.network}: no receipt for ${tx.hash}`,
        );
      return receipt;
    });
  }

  /**
   * Moves the next calls to the next node, as a failed call does: for an answer that came but
   * cannot be right (README "Following the head": an inconsistent node). Returns the next
   * node's URL origin, or undefined when the network has one node.
   */
  failover(): string | undefined {
    if (this.upstreams.length < 2) return undefined;
    this.current = (this.current + 1) % this.upstreams.length;
    return new URL(this.upstreams[this.current]!.url).origin;
  }

  private call<T>(method: string, params: unknown[]): Promise<T> {
    return this.withUpstream((upstream) => this.request<T>(upstream, method, params));
  }

  private async request<T>(upstream: Upstream, method: string, params: unknown[]): Promise<T> {
    // viem's request returns the node's JSON unchanged (no bigint formatting).
    return (await upstream.client.request({ method, params } as never)) as T;
  }

  private async withUpstream<T>(run: (upstream: Upstream) => Promise<T>): Promise<T> {
    let lastError: unknown;
    for (let attempt = 0; attempt < this.upstreams.length; attempt++) {
      const upstream = this.upstreams[this.current]!;
      try {
        return await run(upstream);
      } catch (error) {
        if (error instanceof DomainError) throw error;
        lastError = error;
        this.events.onUpstreamError?.(upstream.url, error);
        this.current = (this.current + 1) % this.upstreams.length;
      }
    }
    throw new DomainError(
      'upstream_unavailable',
      'unavailable',
      `${this.network}: no node answered`,
      {
        cause: lastError,
      },
    );
  }
}

export function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

function isMethodNotFound(error: unknown): boolean {
  for (
    let e = error as { code?: number; message?: string; cause?: unknown } | undefined;
    e;
    e = e.cause as typeof e
  ) {
    if (e.code === METHOD_NOT_FOUND) return true;
    if (
      typeof e.message === 'string' &&
      /method .*(not found|not supported|does not exist)/i.test(e.message)
    )
      return true;
  }
  return false;
}
