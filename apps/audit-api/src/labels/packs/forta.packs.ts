import type { LabelCategory, LabelPack, LabelRow } from '../label.types';
import { evmKey, isEvmAddress, readCsv } from './pack-files';

const ROOT = 'forta-labelled-datasets';
const DATE = '2023-01-26';
const url = (address: string) => `https://etherscan.io/address/${address}`;

const categoryOfList = (source: string): LabelCategory | null =>
  source.includes('phish-hack')
    ? 'phishing'
    : source.includes('exploit') || source.includes('heist')
      ? 'stealing'
      : null;

/** Ethereum phish/hack, exploit and heist accounts (Etherscan lists via Luabase) and phishing scams. */
export const fortaMaliciousLabelsPack: LabelPack = {
  name: 'forta-malicious-labels',
  dir: ROOT,
  license: 'MIT',
  async load(root) {
    const out: LabelRow[] = [];
    for (const row of await readCsv(root, ROOT, 'labels', '1', 'etherscan_malicious_labels.csv')) {
      const address = row['banned_address'] ?? '';
      const category = categoryOfList(row['data_source'] ?? '');
      if (!isEvmAddress(address) || !category) continue;
      out.push({
        pack: this.name,
        chain: 'ETH',
        address: evmKey(address),
        category,
        name: row['wallet_tag'] || null,
        url: url(evmKey(address)),
        sourceDate: DATE,
        extra: { list: row['data_source'] },
      });
    }
    for (const row of await readCsv(root, ROOT, 'labels', '1', 'phishing_scams.csv')) {
      const address = row['address'] ?? '';
      if (!isEvmAddress(address)) continue;
      out.push({
        pack: this.name,
        chain: 'ETH',
        address: evmKey(address),
        category: 'phishing',
        name: row['etherscan_tag'] || null,
        url: url(evmKey(address)),
        sourceDate: DATE,
        extra: { list: 'phishing_scams', labels: row['etherscan_labels'] },
      });
    }
    return out;
  },
};

/**
 * Malicious smart contracts and their creators. A creator gets one row listing every flagged
 * contract it deployed: the count is `number_of_malicious_contracts_created`.
 */
export const fortaMaliciousContractsPack: LabelPack = {
  name: 'forta-malicious-contracts',
  dir: ROOT,
  license: 'MIT',
  async load(root) {
    const out: LabelRow[] = [];
    const byCreator = new Map<string, { contracts: string[]; tag: string }>();
    for (const row of await readCsv(root, ROOT, 'labels', '1', 'malicious_smart_contracts.csv')) {
      const contract = row['contract_address'] ?? '';
      if (!isEvmAddress(contract)) continue;
      out.push({
        pack: this.name,
        chain: 'ETH',
        address: evmKey(contract),
        category: 'malicious_contract',
        name: row['contract_tag'] || null,
        url: url(evmKey(contract)),
        sourceDate: DATE,
        extra: {
          creator: row['contract_creator'] ?? null,
          label: row['contract_creator_etherscan_label'] ?? null,
        },
      });
      const creator = row['contract_creator'] ?? '';
      if (!isEvmAddress(creator)) continue;
      const entry = byCreator.get(evmKey(creator)) ?? {
        contracts: [],
        tag: row['contract_creator_tag'] ?? '',
      };
      if (!entry.contracts.includes(evmKey(contract))) entry.contracts.push(evmKey(contract));
      byCreator.set(evmKey(creator), entry);
    }
    for (const [creator, { contracts, tag }] of byCreator) {
      out.push({
        pack: this.name,
        chain: 'ETH',
        address: creator,
        category: 'malicious_creator',
        name: tag || null,
        url: url(creator),
        sourceDate: DATE,
        extra: { contracts },
      });
    }
    return out;
  },
};
