import { join } from 'node:path';
import { forensicFlags, NO_CHAIN_FLAGS } from '../../scoring/forensic-flags';
import { packRows } from '../label-loader';
import { EVM_ANY, LABEL_CATEGORIES, type LabelRow } from '../label.types';
import { LABEL_PACKS } from './index';
import { parseCsv } from './pack-files';

const ROOT = join(__dirname, '../../../../../data/labels');

describe('label packs', () => {
  it.each([
    [
      'a,b\n1,2\n',
      [
        ['a', 'b'],
        ['1', '2'],
      ],
    ],
    [
      'a,"b, c"\r\n"x ""y""",2',
      [
        ['a', 'b, c'],
        ['x "y"', '2'],
      ],
    ],
    ['"multi\nline",1\n', [['multi\nline', '1']]],
  ])('parses CSV %j', (text, rows) => expect(parseCsv(text)).toEqual(rows));

  it('every shipped pack loads, with valid categories, lower-case EVM keys and its licence file', async () => {
    const { existsSync } = await import('node:fs');
    const names = new Set<string>();
    for (const pack of LABEL_PACKS) {
      expect(names.has(pack.name)).toBe(false);
      names.add(pack.name);
      expect(existsSync(join(ROOT, pack.dir, 'LICENSE'))).toBe(true);
      const rows = await pack.load(ROOT);
      expect(rows.length).toBeGreaterThan(0);
      const categories = new Set<string>(LABEL_CATEGORIES);
      const bad = rows.filter(
        (row) =>
          !categories.has(row.category) ||
          row.pack !== pack.name ||
          (row.address.startsWith('0x') && row.address !== row.address.toLowerCase()),
      );
      expect(bad).toEqual([]);
    }
  }, 30_000);

  it('keeps only Tornado.Cash pools from the tornado list and counts creators', async () => {
    const tornado = await LABEL_PACKS.find((p) => p.name === 'etherscan-tornado-cash')!.load(ROOT);
    expect(tornado.every((r) => r.name?.startsWith('Tornado.Cash:'))).toBe(true);
    expect(tornado.map((r) => r.address)).toContain('0x12d66f87a04a9e220743712ce6d9bb1b5616b8fc');
    const forta = await LABEL_PACKS.find((p) => p.name === 'forta-malicious-contracts')!.load(ROOT);
    const creator = forta.find((r) => r.category === 'malicious_creator')!;
    expect(Array.isArray(creator.extra?.['contracts'])).toBe(true);
  });

  it('flags no token of the shipped token list nor a null address as blocked, a blocked holder still', async () => {
    const byAddress = new Map<string, LabelRow[]>();
    const excluded: Record<string, Record<string, number>> = {};
    for (const pack of LABEL_PACKS) {
      const loaded = await packRows(pack, ROOT);
      excluded[pack.name] = loaded.excluded;
      for (const row of loaded.rows) {
        const key = `${row.chain}|${row.address}`;
        byAddress.set(key, [...(byAddress.get(key) ?? []), row]);
      }
    }
    const flagsOf = (chain: string, address: string) =>
      forensicFlags(
        [
          ...(byAddress.get(`${chain}|${address}`) ?? []),
          ...(byAddress.get(`${EVM_ANY}|${address}`) ?? []),
        ],
        NO_CHAIN_FLAGS,
      );
    const tokens = (byAddress.size > 0 ? [...byAddress.values()].flat() : []).filter(
      (row) => row.category === 'canonical_token',
    );
    expect(tokens.length).toBeGreaterThan(500);
    const flaggedTokens = tokens
      .filter((token) => flagsOf(token.chain, token.address).flagged)
      .map((token) => `${token.chain} ${token.address} ${token.name}`);
    expect(flaggedTokens).toEqual([]);
    for (const address of [
      '0x0000000000000000000000000000000000000000',
      '0x0000000000000000000000000000000000000001',
      '0x50b6071561f068963bcfe2b341126cd6accafafb', // Uniswap V2: USD-USDT
      '0xa74476443119a942de498590fe1f2454d7d4ac0d', // Golem Token (not in the token list)
    ])
      expect(flagsOf('ETH', address).flagged).toBe(false);
    // Real blocked holders: an untagged one and the KuCoin hacker.
    for (const address of [
      '0x6566fd32e6440b4268d616479707321851f354df',
      '0xeb31973e0febf3e3d7058234a5ebbae1ab4b8c23',
    ]) {
      const flags = flagsOf('ETH', address);
      expect(flags.counts.blacklist_doubt).toBe(1);
      expect(flags.sources).toContain('etherscan-blocked');
    }
    // The load log counts what was left out and why.
    expect(excluded['etherscan-blocked']).toEqual({
      'null or precompile-range address': 8,
      'token of the shipped token list': expect.any(Number),
      'token contract (a token page of the scan site)': 1,
      'DEX pair (name tag)': 1,
      'token contract (name tag)': expect.any(Number),
    });
    expect(excluded['ofac-sdn-0xb10c']).toEqual({});
  }, 30_000);
});
