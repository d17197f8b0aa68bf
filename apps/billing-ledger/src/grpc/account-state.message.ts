import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { billingV1 } from '@meridian/contracts';
import { dailyWindow } from '@meridian/plans';
import type { BalanceRow } from '../ledger/ledger.repository';
import { balanceStateOf, capsOf } from '../state/account-state';

/** The billing.v1 AccountState of one account (same version sequence as the KV entries). */
export function accountStateMessage(
  row: BalanceRow,
  now: Date,
): MessageInitShape<typeof billingV1.AccountStateSchema> {
  const state = balanceStateOf(row, now);
  const caps = capsOf(row);
  return {
    accountId: row.accountId,
    planId: row.planId ?? '',
    accountType:
      row.accountType === 'team' ? billingV1.AccountType.TEAM : billingV1.AccountType.INDIVIDUAL,
    nodeOwner: row.nodeOwner,
    version: BigInt(row.version),
    caps: {
      nodeRps: caps.nodeRps,
      accessTokens: caps.accessTokens,
      webhooks: caps.webhooks,
      // Checks used are counted by audit-api; billing only states the quota and its day.
      audit: {
        checksPerPeriod: BigInt(caps.audit.checksPerPeriod),
        checksUsed: 0n,
        periodResetsAt: timestampFromDate(dailyWindow(now).end),
        requestsPerSecond: caps.audit.requestsPerSecond,
      },
    },
    balance: {
      status:
        state.state === 'exhausted'
          ? billingV1.BalanceStatus.EXHAUSTED
          : billingV1.BalanceStatus.OK,
      ...(state.exhaustedSince
        ? { exhaustedSince: timestampFromDate(new Date(state.exhaustedSince)) }
        : {}),
      allowanceCu: BigInt(row.allowance),
      purchasedCu: BigInt(row.purchased),
      pendingTopUpCu: BigInt(row.pending),
      ...(row.periodEnd ? { allowanceResetsAt: timestampFromDate(row.periodEnd) } : {}),
      allowanceTotalCu: BigInt(row.allowanceTotal),
    },
  };
}
