/** Categories a label pack can assign; mapped to forensic fields in scoring/forensic-flags.ts. */
export const LABEL_CATEGORIES = [
  'sanctioned',
  'mixer',
  'phishing',
  'stealing',
  'malicious_contract',
  'malicious_creator',
  'blacklisted',
  'spam_token',
  'canonical_token',
] as const;

export type LabelCategory = (typeof LABEL_CATEGORIES)[number];

/** Chain of a label: an audit chain code, or EVM_ANY for packs valid on every EVM chain (OFAC, scamsniffer). */
export const EVM_ANY = '*evm';

export interface LabelRow {
  readonly pack: string;
  readonly chain: string;
  /** Lower-case hex for EVM; base58 as published for TRON. */
  readonly address: string;
  readonly category: LabelCategory;
  readonly name: string | null;
  readonly url: string | null;
  /** Date of the snapshot the label comes from (YYYY-MM-DD). */
  readonly sourceDate: string | null;
  readonly extra: Record<string, unknown> | null;
}

export interface LabelPack {
  /** Stable name; this is what `data_source` shows when the pack fires. */
  readonly name: string;
  /** Directory under data/labels holding the files and the LICENSE. */
  readonly dir: string;
  readonly license: string;
  load(root: string): Promise<LabelRow[]>;
  /**
   * Rows of the dataset that are not what the pack means (e.g. token contracts in a list of
   * blocked holders): `exclusions(root)` answers, per row, the reason it is left out or null to
   * keep it. The loader applies it (`packRows`) and counts each reason in the load log.
   */
  exclusions?(root: string): Promise<(row: LabelRow) => string | null>;
}
