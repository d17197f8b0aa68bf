import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { LOGGER, urlOrigin } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';

/** What a configured chain URL answered to one JSON-RPC call at start. */
export interface ChainUrlProblem {
  /** The chain codes served by the URL (AUDIT_RPC_URLS keys; ETH for AUDIT_RPC_URL). */
  chains: string[];
  /** Scheme, host and port only: the path holds an access token. */
  origin: string;
  status: number;
}

/**
 * The configured chain URLs that answer 404 to `eth_chainId`: an rpc-gateway URL without an
 * access token in its path (or with a path the node does not serve). Every chain read through it
 * fails (checks answer 502 upstream_unavailable) while /readyz says ready, since the label packs
 * alone answer a check; a warning at start names it. Other failures (a node not up yet, a
 * timeout) are left to the reads themselves. Never throws.
 */
export async function chainUrlsAnswering404(
  urls: Record<string, string>,
  fallbackEthUrl: string | undefined,
  timeoutMs: number,
  fetchImpl: typeof fetch = fetch,
): Promise<ChainUrlProblem[]> {
  const chainsByUrl = new Map<string, string[]>();
  const add = (url: string, chain: string) =>
    chainsByUrl.set(url, [...(chainsByUrl.get(url) ?? []), chain]);
  for (const [chain, url] of Object.entries(urls)) add(url, chain);
  if (fallbackEthUrl && urls['ETH'] === undefined) add(fallbackEthUrl, 'ETH');
  const problems: ChainUrlProblem[] = [];
  await Promise.all(
    [...chainsByUrl].map(async ([url, chains]) => {
      try {
        const response = await fetchImpl(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
          signal: AbortSignal.timeout(timeoutMs),
        });
        await response.body?.cancel();
        if (response.status === 404)
          problems.push({ chains, origin: urlOrigin(url), status: response.status });
      } catch {
        // Unreachable or slow: not what this check is about.
      }
    }),
  );
  return problems;
}

/**
 * At start, a warning per configured chain URL that answers 404 (deploy/README.md "audit-api's
 * access tokens"). Not part of /readyz: checks still answer from the label packs.
 */
@Injectable()
export class ChainUrlCheck implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    void this.check();
  }

  async check(): Promise<void> {
    const { AUDIT_RPC_URLS, AUDIT_RPC_URL, AUDIT_RPC_TIMEOUT_MS } = this.config;
    for (const problem of await chainUrlsAnswering404(
      AUDIT_RPC_URLS,
      AUDIT_RPC_URL,
      AUDIT_RPC_TIMEOUT_MS,
    ))
      this.logger.warn(
        { chains: problem.chains, url: problem.origin, status: problem.status },
        'chain URL answers 404 (an rpc-gateway URL without an access token in its path?): ' +
          'chain reads of these chains will fail with 502 upstream_unavailable',
      );
  }
}
