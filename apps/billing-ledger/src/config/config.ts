import { commonEnv, port } from '@meridian/platform-config';
import { z } from 'zod';

/** Every variable billing-ledger reads, validated at start; nothing else reads process.env. */
export const configSchema = z.object({
  ...commonEnv,
  GRPC_PORT: port.default(9090),
  /** Guards the operator (admin) API. */
  OPERATOR_TOKEN: z.string().min(16, 'must be at least 16 characters'),
  /** How long a top-up stays pending before it clears (spec: one to two minutes). */
  TOPUP_CLEARING_MS: z.coerce.number().int().min(0).default(90_000),
  /** How often top-up clearing, allowance resets and re-publishing run (0 = never; tests tick by hand). */
  LEDGER_TICK_MS: z.coerce.number().int().min(0).default(1_000),
  /** Usage events applied in parallel by one replica (batched into shared transactions). */
  USAGE_CONCURRENCY: z.coerce.number().int().min(1).max(128).default(64),
});

export type AppConfig = z.infer<typeof configSchema>;
