/** Behavioural features of an address without any forensic flag. */
export interface WalletFeatures {
  readonly isContract: boolean;
  /** Outgoing transactions (nonce): what the address sent, never what it received. */
  readonly txCount: number;
  /**
   * A native balance above zero: the address received value (a transfer, a block reward, a
   * genesis allocation) that the nonce does not count. Absent in verdicts cached before it.
   */
  readonly holdsBalance?: boolean;
  /** Token transfers seen in the look-back window (in + out). */
  readonly transferCount: number;
  readonly ageDays: number | null;
  /** Distinct recent counterparties that a pack flags (phishing, stealing, sanctioned, mixer…). */
  readonly flaggedCounterparties: number;
  readonly counterparties: number;
  /** Contracts deployed by this address (malicious ones are a flag, not a feature). */
  readonly contractsCreated: number;
}

export type WalletStatus = 'Fraud' | 'Not Fraud' | 'New Address';

export interface WalletVerdict {
  readonly status: WalletStatus;
  /** In [0, 1]; exactly 1 when flagged. */
  readonly probability: number;
}

/**
 * Logistic score, documented in docs/adr/0302-audit-wallet-scoring.md. Weights are log-odds:
 * the base rate (-3.2 ≈ 4 %) is raised by exposure to flagged counterparties (strongest signal;
 * the share matters more than the count), by youth and by a burst of contract deployments, and
 * lowered by a long, busy history.
 */
export function walletProbability(f: WalletFeatures): number {
  const exposureShare = f.counterparties > 0 ? f.flaggedCounterparties / f.counterparties : 0;
  const young = f.ageDays !== null && f.ageDays < 7 ? 1 : 0;
  const z =
    -3.2 +
    1.6 * Math.min(f.flaggedCounterparties, 3) +
    2.5 * exposureShare +
    0.8 * young +
    0.35 * Math.min(Math.log2(1 + f.contractsCreated), 4) -
    0.35 * Math.log10(1 + f.txCount + f.transferCount) -
    0.25 * Math.log10(1 + (f.ageDays ?? 0));
  return 1 / (1 + Math.exp(-z));
}

/**
 * Whether the chain shows any history of the address that the audit can read: code, a sent
 * transaction (nonce), a token transfer in or out, a created contract, or a native balance (value
 * it received; incoming native transfers themselves are not visible without traces). The one rule
 * behind "New Address" and experience "New" (ADR 0302, fifth amendment).
 */
export function hasHistory(f: WalletFeatures): boolean {
  return (
    f.isContract ||
    f.txCount > 0 ||
    f.transferCount > 0 ||
    f.contractsCreated > 0 ||
    f.holdsBalance === true
  );
}

/** Whether the address only received: history, but no transaction sent (nonce 0) and no code. */
export const onlyReceived = (f: WalletFeatures): boolean =>
  hasHistory(f) && !f.isContract && f.txCount === 0;

export type WalletExperience = 'New' | 'Beginner' | 'Intermediate' | 'Experienced' | 'Unknown';

/**
 * `experience` of the wallet audit: Unknown without chain evidence, New without any history, then
 * by sent transactions and age (an address that only received is a Beginner, not New).
 */
export function walletExperience(f: WalletFeatures, chainRead: boolean): WalletExperience {
  if (!chainRead) return 'Unknown';
  if (!hasHistory(f)) return 'New';
  if (f.txCount < 10 || (f.ageDays ?? 0) < 30) return 'Beginner';
  if (f.txCount < 100 || (f.ageDays ?? 0) < 365) return 'Intermediate';
  return 'Experienced';
}

/** Flags force Fraud / 1; no history at all is "New Address"; otherwise the score decides at 0.5. */
export function walletVerdict(flagged: boolean, f: WalletFeatures): WalletVerdict {
  if (flagged) return { status: 'Fraud', probability: 1 };
  const probability = walletProbability(f);
  if (!hasHistory(f)) return { status: 'New Address', probability };
  return { status: probability >= 0.5 ? 'Fraud' : 'Not Fraud', probability };
}

/** probabilityFraud on the wire: a decimal with 10 places, clamped to [0, 1]. */
export const formatProbability = (p: number): string =>
  Math.min(1, Math.max(0, Number.isFinite(p) ? p : 0)).toFixed(10);
