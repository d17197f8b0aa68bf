import { join } from 'node:path';
import { LABEL_CATEGORIES } from '../label.types';
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
});
