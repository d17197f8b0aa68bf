import type { LabelCategory, LabelPack, LabelRow } from '../label.types';
import { evmKey, isEvmAddress, readJson } from './pack-files';

const ROOT = 'etherscan-labels-brianleect';
const SCANS: Record<string, { chain: string; site: string }> = {
  etherscan: { chain: 'ETH', site: 'https://etherscan.io/address/' },
  bscscan: { chain: 'BNB', site: 'https://bscscan.com/address/' },
  polygonscan: { chain: 'POLY', site: 'https://polygonscan.com/address/' },
};

async function fromFiles(
  root: string,
  pack: string,
  files: ReadonlyArray<{
    scan: string;
    path: string;
    category: LabelCategory;
    keep?: (name: string) => boolean;
  }>,
): Promise<LabelRow[]> {
  const out: LabelRow[] = [];
  for (const { scan, path, category, keep } of files) {
    const { chain, site } = SCANS[scan]!;
    const entries = await readJson<Record<string, string>>(root, ROOT, 'data', scan, path);
    for (const [address, name] of Object.entries(entries)) {
      if (!isEvmAddress(address) || (keep && !keep(name))) continue;
      out.push({
        pack,
        chain,
        address: evmKey(address),
        category,
        name: name || null,
        url: site + evmKey(address),
        sourceDate: '2023-06-18',
        extra: { tag: path.split('/').pop()!.replace('.json', '') },
      });
    }
  }
  return out;
}

/** Tornado Cash pool and router contracts (names "Tornado.Cash: …"; not Gitcoin grants and the like). */
export const etherscanTornadoPack: LabelPack = {
  name: 'etherscan-tornado-cash',
  dir: ROOT,
  license: 'MIT (labels scraped from Etherscan-family sites; research use)',
  load(root) {
    const keep = (name: string) => name.startsWith('Tornado.Cash:');
    return fromFiles(root, this.name, [
      { scan: 'etherscan', path: 'accounts/tornado-cash.json', category: 'mixer', keep },
      { scan: 'polygonscan', path: 'accounts/tornado-cash.json', category: 'mixer', keep },
    ]);
  },
};

/** Exploit, heist and scam accounts of BSC and Polygon (Ethereum's come from the Forta pack). */
export const etherscanMaliciousPack: LabelPack = {
  name: 'etherscan-malicious',
  dir: ROOT,
  license: 'MIT (labels scraped from Etherscan-family sites; research use)',
  load(root) {
    return fromFiles(root, this.name, [
      { scan: 'bscscan', path: 'accounts/heist.json', category: 'stealing' },
      { scan: 'bscscan', path: 'accounts/scam.json', category: 'phishing' },
      { scan: 'polygonscan', path: 'accounts/exploit.json', category: 'stealing' },
      { scan: 'polygonscan', path: 'accounts/heist.json', category: 'stealing' },
      { scan: 'polygonscan', path: 'accounts/scam.json', category: 'phishing' },
    ]);
  },
};

/** Addresses blocked by stablecoin issuers (USDT/USDC freeze lists as tagged on the scan sites). */
export const etherscanBlockedPack: LabelPack = {
  name: 'etherscan-blocked',
  dir: ROOT,
  license: 'MIT (labels scraped from Etherscan-family sites; research use)',
  load(root) {
    return fromFiles(root, this.name, [
      { scan: 'etherscan', path: 'accounts/blocked.json', category: 'blacklisted' },
      { scan: 'polygonscan', path: 'accounts/blocked.json', category: 'blacklisted' },
      { scan: 'bscscan', path: 'tokens/blocked.json', category: 'blacklisted' },
    ]);
  },
};

/** Spam / fake token contracts. */
export const etherscanSpamTokenPack: LabelPack = {
  name: 'etherscan-spam-token',
  dir: ROOT,
  license: 'MIT (labels scraped from Etherscan-family sites; research use)',
  load(root) {
    return fromFiles(root, this.name, [
      { scan: 'etherscan', path: 'accounts/spam-token.json', category: 'spam_token' },
      { scan: 'bscscan', path: 'accounts/spam-token.json', category: 'spam_token' },
    ]);
  },
};
