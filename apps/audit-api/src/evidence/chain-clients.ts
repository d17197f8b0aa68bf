import type { AuditChain } from '@meridian/networks';
import { createPublicClient, http, type PublicClient } from 'viem';

/** Where chain reads of an audit chain go; null when no node is configured for it (labels only). */
export interface ChainClients {
  clientFor(chain: AuditChain): PublicClient | null;
  /** The JSON-RPC URL behind clientFor (what a fork of the chain reads from). */
  urlFor(chain: AuditChain): string | null;
}

export const CHAIN_CLIENTS = Symbol('CHAIN_CLIENTS');

/**
 * One viem public client per configured URL (the rpc-gateway with an access token per network,
 * or any JSON-RPC node). `fallbackEthUrl` (AUDIT_RPC_URL) serves ETH when the map has no entry.
 */
export class UrlChainClients implements ChainClients {
  private readonly clients = new Map<string, PublicClient>();

  constructor(
    private readonly urls: Record<string, string>,
    private readonly fallbackEthUrl: string | undefined,
    private readonly timeoutMs: number,
  ) {}

  urlFor(chain: AuditChain): string | null {
    if (chain.addressFormat !== 'evm') return null;
    return (
      this.urls[chain.code] ?? (chain.code === 'ETH' ? this.fallbackEthUrl : undefined) ?? null
    );
  }

  clientFor(chain: AuditChain): PublicClient | null {
    const url = this.urlFor(chain);
    if (!url) return null;
    let client = this.clients.get(chain.code);
    if (!client) {
      // cacheTime 0: viem otherwise reuses a block number for 4 s, and a stale head hides the newest logs.
      // JSON-RPC batching: the reads of one check that go out together share one HTTP round trip.
      client = createPublicClient({
        cacheTime: 0,
        transport: http(url, {
          batch: { batchSize: 100, wait: 0 },
          timeout: this.timeoutMs,
          retryCount: 1,
          retryDelay: 100,
        }),
      });
      this.clients.set(chain.code, client);
    }
    return client;
  }
}
