import { BalanceStateChangedSchema, CredentialRevokedSchema, KvBuckets } from '@meridian/contracts';
import type { JetStreamConsumers } from '@meridian/platform-messaging';
import { isPlanRequired, type PlanId } from '@meridian/plans';
import type { CredentialService } from './credential.service';
import { spendableCu } from '@meridian/compute-units';

/**
 * The two KV buckets billing-ledger keeps for hot paths, watched into memory: revoked
 * credentials evict cached tokens on every replica within moments; balance state (ok or
 * exhausted, plan RPS, the CU spendable) replaces what the first resolution said, highest version winning.
 * Both are `JetStreamConsumers` mirrors, as in every other app: `messaging_kv_mirror_loaded{bucket}`
 * reports them (what `MeridianNatsConsumerDetached` reads), none is part of `/readyz` (ADR 0212
 * amendment), and they stop before the NATS connection closes.
 */
export function startBillingFeeds(consumers: JetStreamConsumers, credentials: CredentialService) {
  const revoked = consumers.mirror(
    KvBuckets.revokedCredentials.name,
    CredentialRevokedSchema,
    (_key, value) => {
      if (value?.credentialType === 'access_token') credentials.revokeHash(value.credentialHash);
    },
  );
  const balances = consumers.mirror(
    KvBuckets.balanceState.name,
    BalanceStateChangedSchema,
    (key, value) => {
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
  );
  return { revoked, balances, stop: () => Promise.all([revoked.stop(), balances.stop()]) };
}
