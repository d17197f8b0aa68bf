import { EVM_ANY, type LabelPack } from '../label.types';
import { evmKey, isEvmAddress, readCsv } from './pack-files';

/** OFAC SDN Ethereum addresses (Jun 2026 snapshot); an SDN address is sanctioned on every EVM chain. */
export const ofacUltrasoundmoneyPack: LabelPack = {
  name: 'ofac-eth-ultrasoundmoney',
  dir: 'ofac-eth-ultrasoundmoney',
  license: 'MIT',
  async load(root) {
    const rows = await readCsv(root, this.dir, 'data.csv');
    return rows
      .filter((row) => isEvmAddress(row['address'] ?? ''))
      .map((row) => ({
        pack: this.name,
        chain: EVM_ANY,
        address: evmKey(row['address']!),
        category: 'sanctioned' as const,
        name: row['name']?.trim() || null,
        url: 'https://sanctionssearch.ofac.treas.gov/',
        sourceDate: '2026-06-25',
        extra: { list: 'SDN' },
      }));
  },
};
