import type { StoredLabel } from '../labels/labels.repository';
import {
  zeroCounts,
  type WalletForensicCounter,
  type WalletForensicCounts,
} from './forensic-fields';

/** Facts from the chain that set forensic counters on their own (pure data, no I/O). */
export interface OnChainFlags {
  /** Deposits into / withdrawals from labelled mixer pools by this address. */
  readonly mixerInteractions: number;
  /** Contracts this address deployed that a pack labels malicious. */
  readonly maliciousContractsCreated: readonly string[];
  /** This contract reuses a canonical token's symbol or name at another address. */
  readonly impersonatesToken: boolean;
  /** Tokens this address created that the rug pull checker found to be honeypots (stored verdicts). */
  readonly honeypotsCreated?: readonly string[];
  /** This address is a token the rug pull checker found to be a honeypot (its stored verdict). */
  readonly isHoneypotToken?: boolean;
}

export const NO_CHAIN_FLAGS: OnChainFlags = {
  mixerInteractions: 0,
  maliciousContractsCreated: [],
  impersonatesToken: false,
};

/** Which forensic counter each label category sets. */
const CATEGORY_FIELDS: Record<string, readonly WalletForensicCounter[]> = {
  sanctioned: ['sanctioned'],
  mixer: ['mixer', 'money_laundering'],
  phishing: ['phishing_activities'],
  stealing: ['stealing_attack'],
  malicious_contract: ['cybercrime'],
  blacklisted: ['blacklist_doubt'],
  spam_token: ['fake_token'],
};

/** data_source of a flag that comes from this service's own rug pull verdicts. */
export const RUG_PULL_SOURCE = 'rug-pull-checker';

export interface ForensicResult {
  readonly counts: WalletForensicCounts;
  /** Packs that fired (plus "onchain" when chain evidence set a counter), sorted and unique. */
  readonly sources: string[];
  readonly flagged: boolean;
}

/**
 * Maps the labels of the checked address and the on-chain facts to forensic counters. Labels of
 * the address itself only: one-hop exposure feeds the score, never a flag.
 */
export function forensicFlags(labels: readonly StoredLabel[], chain: OnChainFlags): ForensicResult {
  const counts = zeroCounts();
  const sources = new Set<string>();
  // Every malicious contract the address created, once each however it is known: labelled
  // (a pack, or on chain) or found a honeypot by the rug pull checker (QA L5).
  const created = new Set([...chain.maliciousContractsCreated, ...(chain.honeypotsCreated ?? [])]);
  for (const label of labels) {
    if (label.category === 'malicious_creator') {
      const contracts = Array.isArray(label.extra?.['contracts'])
        ? (label.extra['contracts'] as string[])
        : [];
      for (const contract of contracts) created.add(contract);
      sources.add(label.pack);
      continue;
    }
    const fields = CATEGORY_FIELDS[label.category];
    if (!fields) continue;
    for (const field of fields) counts[field] = 1;
    sources.add(label.pack);
  }
  counts.number_of_malicious_contracts_created = created.size;
  if (chain.maliciousContractsCreated.length > 0) sources.add('onchain');
  if (chain.mixerInteractions > 0) {
    counts.mixer = 1;
    counts.money_laundering = 1;
    sources.add('onchain');
  }
  if (chain.impersonatesToken) {
    counts.fake_token = 1;
    sources.add('onchain');
  }
  if ((chain.honeypotsCreated?.length ?? 0) > 0 || chain.isHoneypotToken === true) {
    counts.honeypot_related_address = 1;
    sources.add(RUG_PULL_SOURCE);
  }
  const flagged = Object.values(counts).some((value) => value > 0);
  return { counts, sources: [...sources].sort(), flagged };
}
