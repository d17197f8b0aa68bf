/** Members of a wallet's `forensic_details`, in the spec's order (every one a decimal string, data_source free text). */
export const WALLET_FORENSIC_COUNTERS = [
  'cybercrime',
  'money_laundering',
  'number_of_malicious_contracts_created',
  'gas_abuse',
  'financial_crime',
  'darkweb_transactions',
  'reinit',
  'phishing_activities',
  'fake_kyc',
  'blacklist_doubt',
  'fake_standard_interface',
  'stealing_attack',
  'blackmail_activities',
  'sanctioned',
  'malicious_mining_activities',
  'mixer',
  'fake_token',
  'honeypot_related_address',
] as const;

export type WalletForensicCounter = (typeof WALLET_FORENSIC_COUNTERS)[number];
export type WalletForensicCounts = Record<WalletForensicCounter, number>;

export const zeroCounts = (): WalletForensicCounts =>
  Object.fromEntries(WALLET_FORENSIC_COUNTERS.map((name) => [name, 0])) as WalletForensicCounts;

/** The wire form: counters as decimal strings in spec order, data_source after blacklist_doubt/fake_standard_interface as in the table. */
export function toWireForensicDetails(
  counts: WalletForensicCounts,
  sources: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of WALLET_FORENSIC_COUNTERS) {
    out[name] = String(counts[name]);
    if (name === 'fake_standard_interface') out['data_source'] = sources.join(',');
  }
  return out;
}
