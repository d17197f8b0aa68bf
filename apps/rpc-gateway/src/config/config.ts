import { commonEnv, port } from '@meridian/platform-config';
import { z } from 'zod';

const { DATABASE_URL: _none, ...withoutDatabase } = commonEnv;

/** Every variable rpc-gateway reads, validated at start; nothing else reads process.env. */
export const configSchema = z.object({
  ...withoutDatabase,
  /** Which endpoint this deployment serves: a region, or the shared endpoint of network S. */
  REGION: z.enum(['eu', 'us', 'asia', 'shared']),
  GRPC_PORT: port.default(9090),
  BILLING_GRPC_URL: z.string().default('127.0.0.1:9090'),
  /** JSON object: network key → array of upstream node URLs. */
  UPSTREAMS: z.string().default('{}'),
  /** Upstreams of network S, comma separated (ARCHITECTURE). */
  SUI_UPSTREAM_URLS: z.string().default(''),
});

export type AppConfig = z.infer<typeof configSchema>;
