import { BalanceStateChangedSchema, CredentialRevokedSchema, KvBuckets } from '@meridian/contracts';
import { KvMirror, type NatsClient, type NatsNamespace } from '@meridian/platform-messaging';
import { isPlanRequired, type PlanId } from '@meridian/plans';
import type { Logger } from 'pino';
import type { CredentialService } from './credential.service';
import { spendableCu } from '@meridian/compute-units';

/**
 * The two KV buckets billing-ledger keeps for hot paths, watched into memory: revoked
 * credentials evict cached tokens on every replica within moments; balance state (ok or
 * exhausted, plan RPS, the CU spendable) replaces what the first resolution said, highest version winning.
 */
export function startBillingFeeds(
  client: NatsClient,
  namespace: NatsNamespace,
  credentials: CredentialService,
  logger: Logger,
) {
  const revoked = new KvMirror(client, namespace, {
    bucket: KvBuckets.revokedCredentials.name,
    schema: CredentialRevokedSchema,
    logger,
    onChange: (_key, value) => {
      if (value?.credentialType === 'access_token') credentials.revokeHash(value.credentialHash);
    },
  });
  const balances = new KvMirror(client, namespace, {
    bucket: KvBuckets.balanceState.name,
    schema: BalanceStateChangedSchema,
    logger,
    onChange: (key, value) => {
      if (value === undefined) return;
      credentials.applyAccount({
        accountId: key,
        status: value.state,
        nodeRps: value.caps.nodeRps,
        planRequired: isPlanRequired({
          plan: value.planId as PlanId | null,
          nodeOwner: value.nodeOwner,
        }),
        spendableCu: spendableCu(value.allowanceCu, value.purchasedCu),
        version: value.version,
      });
    },
  });
  revoked.start();
  balances.start();
  return { revoked, balances, stop: () => Promise.all([revoked.stop(), balances.stop()]) };
}
