import { commonEnv, urlOf } from '@meridian/platform-config';
import { z } from 'zod';

const rpcUrlMap = z
  .string()
  .default('{}')
  .transform((text, ctx) => {
    try {
      const parsed = z.record(z.string(), z.string().url()).parse(JSON.parse(text));
      return Object.fromEntries(Object.entries(parsed).map(([code, url]) => [code.toUpperCase(), url]));
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object of chain code -> http(s) URL' });
      return z.NEVER;
    }
  });

/** Every variable audit-api reads, validated at start; nothing else reads process.env. */
export const configSchema = z.object({
  ...commonEnv,
  /** billing-ledger gRPC (credential resolution, plan and quota). */
  BILLING_GRPC_URL: z.string().default('127.0.0.1:9090'),
  /** JSON-RPC base used for chain reads (the rpc-gateway, or any node while it is absent). Used for ETH when no map entry. */
  AUDIT_RPC_URL: urlOf(['http:', 'https:']).optional(),
  /** Per-chain JSON-RPC URLs, e.g. {"ETH":"http://gw/<token>/","POLY":"…"}; wins over AUDIT_RPC_URL. */
  AUDIT_RPC_URLS: rpcUrlMap,
  /** How long a verdict is reused (checked_times still counts every check). */
  AUDIT_VERDICT_TTL_MS: z.coerce.number().int().min(0).default(10 * 60_000),
  /** How long a resolved API key is trusted before asking billing-ledger again. */
  AUDIT_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  /** Blocks scanned back from head for mixer events and token transfers (one-hop exposure). */
  AUDIT_LOOKBACK_BLOCKS: z.coerce.number().int().min(1).default(50_000),
  /** Per-call timeout of chain reads; a timeout answers 502. */
  AUDIT_RPC_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
});

export type AppConfig = z.infer<typeof configSchema>;
