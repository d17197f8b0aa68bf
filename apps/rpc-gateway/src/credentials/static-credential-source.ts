import { isNetworkKey } from '@meridian/networks';
import { PLANS, type PlanId } from '@meridian/plans';
import { z } from 'zod';
import type { CredentialSource, ResolvedToken } from './credential-cache';

const entry = z.object({
  accountId: z.string().min(1),
  network: z.string().refine(isNetworkKey, 'unknown network key'),
  /** null: an account without a plan (a team that has not picked one). */
  planId: z.string().nullable().optional(),
  nodeRps: z.number().int().positive().optional(),
  status: z.enum(['ok', 'exhausted']).optional(),
});

/**
 * Tokens from config (STATIC_ACCESS_TOKENS) for running the gateway without billing-ledger:
 * local development, benchmarks, tests of the relay alone. Never used when unset.
 */
export class StaticCredentialSource implements CredentialSource {
  private readonly tokens: Map<string, ResolvedToken>;

  constructor(json: string) {
    const parsed = z.record(z.string(), entry).parse(JSON.parse(json));
    this.tokens = new Map(
      Object.entries(parsed).map(([token, e], index) => {
        const plan = PLANS[(e.planId ?? 'free') as PlanId] ?? PLANS.free;
        const resolved: ResolvedToken = {
          tokenId: `static-${index}`,
          accountId: e.accountId,
          network: e.network as ResolvedToken['network'],
          account: {
            accountId: e.accountId,
            status: e.status ?? 'ok',
            nodeRps: e.nodeRps ?? plan.nodeRps,
            planRequired: e.planId === null,
            version: 0,
          },
        };
        return [token, resolved];
      }),
    );
  }

  async resolve(token: string): Promise<ResolvedToken | null> {
    return this.tokens.get(token) ?? null;
  }
}
