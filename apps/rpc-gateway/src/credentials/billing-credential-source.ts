import { billingV1 } from '@meridian/contracts';
import { isNetworkKey } from '@meridian/networks';
import { isPlanRequired, type PlanId } from '@meridian/plans';
import { createGrpcClient, type GrpcClient, type GrpcTls } from '@meridian/platform-grpc';
import type { CredentialSource, ResolvedToken } from './credential-cache';
import { spendableCu } from '@meridian/compute-units';

/**
 * billing-ledger's ResolveAccessToken over gRPC: called once per token on first sight (the
 * answer is cached), never per request.
 */
export class BillingCredentialSource implements CredentialSource {
  private readonly client: GrpcClient<typeof billingV1.BillingService.method>;

  /** `tls`: the GRPC_TLS_* files (`grpcTlsOf(config)`); plaintext without. */
  constructor(address: string, tls?: GrpcTls, timeoutMs = 3_000) {
    this.client = createGrpcClient(billingV1.BillingService, address, {
      tls,
      defaultTimeoutMs: timeoutMs,
    });
  }

  async resolve(token: string): Promise<ResolvedToken | null> {
    const r = await this.client.resolveAccessToken({ token });
    if (!r.found || !isNetworkKey(r.networkKey)) return null;
    const account = r.account;
    return {
      tokenId: r.tokenId,
      accountId: r.accountId,
      network: r.networkKey,
      account: account
        ? {
            accountId: r.accountId,
            status:
              account.balance?.status === billingV1.BalanceStatus.EXHAUSTED ? 'exhausted' : 'ok',
            nodeRps: account.caps?.nodeRps ?? 0,
            // planId is '' for an account without a plan (billing.v1 AccountState).
            planRequired: isPlanRequired({
              plan: account.planId === '' ? null : (account.planId as PlanId),
              nodeOwner: account.nodeOwner,
            }),
            spendableCu: spendableCu(
              Number(account.balance?.allowanceCu ?? 0n),
              Number(account.balance?.purchasedCu ?? 0n),
            ),
            version: Number(account.version),
          }
        : undefined,
    };
  }

  close(): void {
    this.client.close();
  }
}
