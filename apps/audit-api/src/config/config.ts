import { commonEnv, grpcTargetSetting, secretSetting, urlOf } from '@meridian/platform-config';
import { z } from 'zod';

const rpcUrlMap = z.string().transform((text, ctx) => {
  try {
    const parsed = z.record(z.string(), z.string().url()).parse(JSON.parse(text));
    return Object.fromEntries(
      Object.entries(parsed).map(([code, url]) => [code.toUpperCase(), url]),
    );
  } catch {
    ctx.addIssue({
      code: 'custom',
      message: 'must be a JSON object of chain code -> http(s) URL',
    });
    return z.NEVER;
  }
});

/**
 * Uniswap V2 Router02, PancakeSwap V2, QuickSwap, Uniswap V2 on Base, PancakeSwap V2 on opBNB
 * (the main DEX there; PancakeRouter address from developer.pancakeswap.finance/contracts/v2/addresses).
 * A chain without an entry answers `has_liquidity_pool` null (unknown), not 0.
 */
export const DEFAULT_ROUTERS: Record<string, string[]> = {
  ETH: ['0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D'],
  BNB: ['0x10ED43C718714eb63d5aA57B78B54704E256024E'],
  POLY: ['0xa5E0829CaCEd8fFDD4De3c43696c57F7D7A678ff'],
  BASE: ['0x4752ba5DBc23f44D87826276BF6Fd6b1C372aD24'],
  OPBNB: ['0x8cFe327CEc66d1C090Dd72bd0FF11d690C33a2Eb'],
};

const routerMap = z
  .string()
  .optional()
  .transform((text, ctx) => {
    if (text === undefined || text === '') return DEFAULT_ROUTERS;
    try {
      const parsed = z
        .record(z.string(), z.array(z.string().regex(/^0x[0-9a-fA-F]{40}$/)))
        .parse(JSON.parse(text));
      return Object.fromEntries(
        Object.entries(parsed).map(([code, list]) => [code.toUpperCase(), list]),
      );
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: 'must be a JSON object of chain code -> [router addresses]',
      });
      return z.NEVER;
    }
  });

/** Every variable audit-api reads, validated at start; nothing else reads process.env. */
export const configSchema = z.object({
  ...commonEnv,
  /** billing-ledger gRPC (credential resolution, plan and quota). */
  BILLING_GRPC_URL: grpcTargetSetting.default('127.0.0.1:9090'),
  /** JSON-RPC base used for chain reads (the rpc-gateway, or any node while it is absent). Used for ETH when no map entry. */
  // Empty is unset (no chain reads yet), as compose passes `${AUDIT_RPC_URL:-}` before a token exists.
  AUDIT_RPC_URL: secretSetting(
    z.union([z.literal('').transform(() => undefined), urlOf(['http:', 'https:'])]),
  ).optional(),
  /** Per-chain JSON-RPC URLs, e.g. {"ETH":"http://gw/<token>/","POLY":"…"}; wins over AUDIT_RPC_URL. */
  AUDIT_RPC_URLS: secretSetting(rpcUrlMap).prefault('{}'),
  /** How long a verdict is reused (checked_times still counts every check). */
  AUDIT_VERDICT_TTL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(10 * 60_000),
  /**
   * How long a resolved API key is kept before asking billing-ledger again: a safety net only,
   * a deleted or revoked key is evicted as soon as billing-ledger's revocation feed names it.
   */
  AUDIT_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  /** Blocks scanned back from head for mixer events and token transfers (one-hop exposure). */
  AUDIT_LOOKBACK_BLOCKS: z.coerce.number().int().min(1).default(50_000),
  /** Uniswap-V2-style routers per chain for the rug pull trade simulation (defaults: the main V2 DEX of ETH, BNB, POLY, BASE, OPBNB). */
  AUDIT_DEX_ROUTERS: routerMap,
  /** Per-call timeout of chain reads; a timeout answers 502. */
  AUDIT_RPC_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /**
   * Confirm a failed one-call trade with real transactions across blocks on a fork of the chain
   * (an anvil process per chain, started on first use) before calling a token a honeypot.
   */
  AUDIT_FORK_SIMULATION: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /**
   * Link the creator of a token found to be a honeypot to it (ADR 0302, amendment): the creator
   * is `honeypot_related_address`, its other tokens `honeypot_with_same_creator`. Honeypots are
   * recorded either way; `false` only stops reading them (the tests and the bench, which check
   * many tokens of one deployer, each on its own).
   */
  AUDIT_HONEYPOT_CREATOR_LINK: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
});

export type AppConfig = z.infer<typeof configSchema>;
