import { EVM_ANY, type LabelPack } from '../label.types';
import { evmKey, isEvmAddress, readJson } from './pack-files';

/** Wallet-drainer and phishing addresses reported by ScamSniffer (multi-chain EVM). GPL-3.0. */
export const scamsnifferPack: LabelPack = {
  name: 'scamsniffer',
  dir: 'scamsniffer-scam-database',
  license: 'GPL-3.0',
  async load(root) {
    const list = await readJson<string[]>(root, this.dir, 'blacklist', 'address.json');
    return list.filter(isEvmAddress).map((address) => ({
      pack: this.name,
      chain: EVM_ANY,
      address: evmKey(address),
      category: 'phishing' as const,
      name: 'ScamSniffer blacklist',
      url: 'https://github.com/scamsniffer/scam-database',
      sourceDate: '2024-02-29',
      extra: null,
    }));
  },
};
