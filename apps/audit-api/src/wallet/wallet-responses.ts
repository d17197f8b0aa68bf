import type { AddressRecord, SanctionRecord } from '../records/address-records.repository';

/**
 * The address record of a check, when its verdict was computed (lastChecked) and whether it was
 * served without knowing that it still holds (stale: the node did not answer).
 */
export type CheckedRecord = AddressRecord & { readonly computedAt: Date; readonly stale: boolean };
import { toWireForensicDetails } from '../scoring/forensic-fields';
import { formatProbability, onlyReceived, walletExperience } from '../scoring/wallet-score';
import type { WalletAssessment } from './wallet-assessor.service';

export const SUCCESS = 'Success';

export const sanctionWire = (s: SanctionRecord) => ({
  id: s.id,
  trustscore_id: s.trustscoreId,
  category: s.category,
  name: s.name,
  description: s.description,
  url: s.url,
  isSanctioned: s.isSanctioned,
  createdAt: s.createdAt.toISOString(),
  updatedAt: s.updatedAt.toISOString(),
});

/** The spec's "Address audit result" in field order. */
export function walletCheckData(
  display: string,
  chain: string,
  a: WalletAssessment,
  record: CheckedRecord,
  sanctions: readonly SanctionRecord[],
) {
  return {
    message: SUCCESS,
    walletAddress: display,
    status: a.status,
    probabilityFraud: formatProbability(a.probability),
    token: a.token,
    chain,
    // When the verdict was computed from the chain and the labels; a verdict reused from the
    // cache keeps its time (updatedAt is the time of this check).
    lastChecked: record.computedAt.toISOString(),
    stale: record.stale,
    forensic_details: toWireForensicDetails(a.counts, a.sources),
    checked_times: record.checkedTimes,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    sanctionData: sanctions.map(sanctionWire),
  };
}

const riskProfile = (p: number) => (p >= 0.7 ? 'High' : p >= 0.3 ? 'Medium' : 'Low');

/**
 * Full only on the evidence of labels and the chain: an address scored from the labels alone (no
 * node for the network) is at most Limited, however low its probability (ADR 0302, amendment).
 */
function riskCapability(a: WalletAssessment, profile: 'Low' | 'Medium' | 'High'): string {
  if (profile === 'High') return 'Restricted';
  if (profile === 'Medium' || !a.chainRead) return 'Limited';
  return 'Full';
}

function recommendation(a: WalletAssessment): string {
  if (a.counts.sanctioned > 0) return 'Do not interact: the address is on a sanctions list.';
  if (a.counts.honeypot_related_address > 0)
    return 'Avoid: the address created a token the rug pull checker found to be a honeypot.';
  if (a.status === 'Fraud')
    return 'Avoid: the address carries fraud flags; see forensic_details and data_source.';
  if (a.status === 'New Address') return 'Caution: the address has no history yet.';
  if (a.features.flaggedCounterparties > 0)
    return 'Caution: the address transacted with flagged addresses.';
  if (!a.chainRead)
    return 'No known risk in the label packs; no chain evidence was read for this network.';
  if (onlyReceived(a.features))
    return 'No known risk; the address has received value but has not sent a transaction yet.';
  return 'No known risk.';
}

/** `/wallet-audit/audit`: the check's fields plus a behavioural profile (COMPAT "Address audit"). */
export function walletAuditData(
  display: string,
  chain: string,
  a: WalletAssessment,
  record: CheckedRecord,
  sanctions: readonly SanctionRecord[],
) {
  const categories = Object.entries(a.counts)
    .filter(([, value]) => value > 0)
    .map(([name]) => name);
  const profile = riskProfile(a.probability);
  return {
    ...walletCheckData(display, chain, a, record, sanctions),
    categories,
    riskProfile: profile,
    experience: walletExperience(a.features, a.chainRead),
    protocols: a.protocols,
    userDetails: {
      wallet_age_days: a.features.ageDays,
      // No price feed is shipped (no internet at run time): null rather than a made-up figure.
      total_balance_usd: null as number | null,
      // Transactions the address sent (its nonce; ADR 0302, fifth amendment). Unknown (null)
      // where no node was read, not 0 (ADR 0302 amendment).
      transaction_count: a.chainRead ? a.features.txCount : null,
    },
    riskCapability: riskCapability(a, profile),
    recommendation: recommendation(a),
  };
}
