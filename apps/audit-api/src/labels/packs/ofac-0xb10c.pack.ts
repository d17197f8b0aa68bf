import { EVM_ANY, type LabelPack, type LabelRow } from '../label.types';
import { evmKey, isEvmAddress, readJson } from './pack-files';

const FILES: ReadonlyArray<{ file: string; asset: string }> = [
  { file: 'sanctioned_addresses_ETH.json', asset: 'ETH' },
  { file: 'sanctioned_addresses_BSC.json', asset: 'BSC' },
  { file: 'sanctioned_addresses_USDT.json', asset: 'USDT' },
  { file: 'sanctioned_addresses_USDC.json', asset: 'USDC' },
  { file: 'sanctioned_addresses_TRX.json', asset: 'TRX' },
];
const TRON = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;

/** OFAC SDN digital-currency addresses by asset (Sep 2024 snapshot, still lists the Tornado Cash pools). */
export const ofac0xb10cPack: LabelPack = {
  name: 'ofac-sdn-0xb10c',
  dir: 'ofac-sdn-0xb10c',
  license: 'MIT',
  async load(root) {
    const out: LabelRow[] = [];
    for (const { file, asset } of FILES) {
      for (const raw of await readJson<string[]>(root, this.dir, file)) {
        const chain = isEvmAddress(raw) ? EVM_ANY : TRON.test(raw.trim()) ? 'TRON' : null;
        if (!chain) continue;
        out.push({
          pack: this.name,
          chain,
          address: chain === EVM_ANY ? evmKey(raw) : raw.trim(),
          category: 'sanctioned',
          name: null,
          url: 'https://sanctionssearch.ofac.treas.gov/',
          sourceDate: '2024-09-27',
          extra: { list: 'SDN', asset },
        });
      }
    }
    return out;
  },
};
