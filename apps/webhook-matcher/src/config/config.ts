import { commonEnv } from '@meridian/platform-config';
import { z } from 'zod';

/** Every variable webhook-matcher reads, validated at start; nothing else reads process.env. */
export const configSchema = z.object({
  ...commonEnv,
  BILLING_GRPC_URL: z.string().default('127.0.0.1:9090'),
});

export type AppConfig = z.infer<typeof configSchema>;
