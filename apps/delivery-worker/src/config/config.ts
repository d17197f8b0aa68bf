import { commonEnv } from '@meridian/platform-config';
import { z } from 'zod';

/** Every variable delivery-worker reads, validated at start; nothing else reads process.env. */
export const configSchema = z.object({
  ...commonEnv,
  /** Local and test deployments may deliver to loopback targets; production refuses them. */
  ALLOW_LOOPBACK_TARGETS: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
});

export type AppConfig = z.infer<typeof configSchema>;
