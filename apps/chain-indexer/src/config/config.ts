import { commonEnv } from '@meridian/platform-config';
import { z } from 'zod';

/** Every variable chain-indexer reads, validated at start; nothing else reads process.env. */
export const configSchema = z.object({
  ...commonEnv,
  /** Network keys to follow, comma separated (empty: none). */
  NETWORKS: z.string().default(''),
  /** JSON object: network key → array of upstream node URLs. */
  UPSTREAMS: z.string().default('{}'),
});

export type AppConfig = z.infer<typeof configSchema>;
