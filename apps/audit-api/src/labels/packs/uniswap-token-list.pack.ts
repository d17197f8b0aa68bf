import type { LabelPack, LabelRow } from '../label.types';
import { evmKey, isEvmAddress, readJson } from './pack-files';

const FILES: Record<string, string> = {
  'mainnet.json': 'ETH',
  'bnb.json': 'BNB',
  'polygon.json': 'POLY',
  'base.json': 'BASE',
};

interface TokenEntry {
  address: string;
  name: string;
  symbol: string;
  decimals: number;
}

/** Canonical tokens: a contract using a listed token's name or symbol at another address is a fake_token. */
export const uniswapTokenListPack: LabelPack = {
  name: 'uniswap-default-token-list',
  dir: 'uniswap-default-token-list',
  license: 'GPL-3.0-or-later',
  async load(root) {
    const out: LabelRow[] = [];
    for (const [file, chain] of Object.entries(FILES)) {
      for (const token of await readJson<TokenEntry[]>(root, this.dir, 'src', 'tokens', file)) {
        if (!isEvmAddress(token.address)) continue;
        out.push({
          pack: this.name,
          chain,
          address: evmKey(token.address),
          category: 'canonical_token',
          name: token.name,
          url: null,
          sourceDate: '2026-08-06',
          extra: { symbol: token.symbol, decimals: token.decimals },
        });
      }
    }
    return out;
  },
};
