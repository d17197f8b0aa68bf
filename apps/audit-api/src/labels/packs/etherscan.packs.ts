import type { LabelCategory, LabelPack, LabelRow } from '../label.types';
import { evmKey, isEvmAddress, readJson } from './pack-files';
import { uniswapTokenListPack } from './uniswap-token-list.pack';

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
        extra: { tag: path.split('/').pop()!.replace('.json', ''), list: path.split('/')[0] },
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

/** Zero, 0x…01, the precompiles (0x…01-0x…11, P-256 at 0x…0100): all below 0x10000, no key. */
const NULL_OR_PRECOMPILE = /^0x0{36}[0-9a-f]{4}$/;
/** Etherscan's name tags of token contracts ("Curve.fi: CRV Token", "Tether: USDT Stablecoin"). */
const TOKEN_NAME = /(?:\bToken|\bStablecoin|^Evolution Land: Kryptonite)$/;
/** Name tags of DEX pools ("Uniswap V2: USD-USDT"). */
const PAIR_NAME = /^(?:Uniswap V[23]|SushiSwap|Sushiswap|PancakeSwap V2): /;

/**
 * Addresses blocked by stablecoin issuers (USDT/USDC freeze lists as tagged on the scan sites).
 * The scan sites' `blocked` tag also sits on token contracts, the null addresses and a pool
 * (USDT, CRV, YFI, 0x0, "Uniswap V2: USD-USDT"): an address a stablecoin refuses to receive
 * funds, not a holder whose funds were frozen, so those rows are excluded (ADR 0301, amendment).
 */
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
  async exclusions(root) {
    const tokens = new Set(
      (await uniswapTokenListPack.load(root)).map((row) => `${row.chain}|${row.address}`),
    );
    return (row) => blockedExclusion(row, tokens);
  },
};

/** Why a row of the blocked lists is not a blocked holder, or null: it is one. */
export function blockedExclusion(row: LabelRow, tokenList: ReadonlySet<string>): string | null {
  if (NULL_OR_PRECOMPILE.test(row.address)) return 'null or precompile-range address';
  if (tokenList.has(`${row.chain}|${row.address}`)) return 'token of the shipped token list';
  if (row.extra?.['list'] === 'tokens') return 'token contract (a token page of the scan site)';
  if (row.name && PAIR_NAME.test(row.name)) return 'DEX pair (name tag)';
  if (row.name && TOKEN_NAME.test(row.name)) return 'token contract (name tag)';
  return null;
}

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
