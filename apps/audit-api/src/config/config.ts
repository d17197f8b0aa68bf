import { commonEnv, urlOf } from '@meridian/platform-config';
import { z } from 'zod';

/** Every variable audit-api reads, validated at start; nothing else reads process.env. */
export const configSchema = z.object({
  ...commonEnv,
  /** billing-ledger gRPC (credential resolution, plan and quota). */
  BILLING_GRPC_URL: z.string().default('127.0.0.1:9090'),
  /** JSON-RPC base used for chain reads (the rpc-gateway, or any node while it is absent). */
  AUDIT_RPC_URL: urlOf(['http:', 'https:']).optional(),
});

export type AppConfig = z.infer<typeof configSchema>;
