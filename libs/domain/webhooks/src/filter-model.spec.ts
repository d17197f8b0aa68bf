import { isDomainError } from '@meridian/errors';
import {
  collectAddresses,
  collectListRefs,
  needsTxHash,
  normalizeAddresses,
  normalizeFilter,
  type FilterInput,
} from './filter-model';

/** Mixed case with its right EIP-55 checksum (`0x` + `ab` × 20). */
const A = '0xABaBaBaBABabABabAbAbABAbABabababaBaBABaB';
/** A with one letter's case flipped: a wrong checksum (ADR 0403). */
const A_TYPO = '0xABaBaBaBABabABabAbAbABAbABabababaBaBABab';
/** anvil's account 1 as the README walkthrough once mistyped it (…dC79C8 for …dc79C8). */
const README_TYPO = '0x70997970C51812dc3A010C7d01b50e0d17dC79C8';
const B = '0x' + '12'.repeat(20);
const L = 'al_' + 'a'.repeat(24);
const L2 = 'al_' + 'b'.repeat(24);
const T = '0x' + 'dd'.repeat(32);
const H = '0x' + 'Ee'.repeat(32);

const errorOf = (input: FilterInput): { code: string; path: unknown } => {
  try {
    normalizeFilter(input);
  } catch (error) {
    if (!isDomainError(error)) throw error;
    // Every refusal of the filter is located in the house form: the body, the path from it.
    expect(error.details?.['location']).toBe('body');
    return { code: error.code, path: error.details?.['path'] };
  }
  throw new Error('accepted');
};

const nest = (depth: number): unknown =>
  depth === 1 ? { address: { in: [A] } } : { not: nest(depth - 1) };

describe('normalizeFilter', () => {
  it('lower-cases addresses, fills defaults and counts inline addresses and lists', () => {
    const f = normalizeFilter({
      filters: {
        any: [
          { address: { dir: 'in', in: [A], list_refs: [L] } },
          {
            all: [
              { contract: { in: [B] } },
              { topic: { position: 0, in: [T.toUpperCase().replace('0X', '0x')] } },
            ],
          },
        ],
      },
      addresses: [B.toUpperCase().replace('0X', '0x')],
      list_refs: [L],
    });
    expect(f.inlineAddresses).toBe(3);
    expect(f.referencedLists).toEqual([L]);
    // The list in a leaf and in the shorthand: two references, each counted by the caps.
    expect(f.listReferences).toEqual([L, L]);
    expect(f.addresses).toEqual([B]);
    expect(collectAddresses(f.tree)).toEqual([A.toLowerCase(), B, B]);
    expect(collectListRefs(f.tree)).toEqual([L]);
    expect('all' in f.tree).toBe(true);
  });

  it('shorthand alone becomes one address leaf', () => {
    const f = normalizeFilter({ addresses: [A] });
    expect(f.filters).toBeNull();
    expect(f.tree).toEqual({ address: { dir: 'any', in: [A.toLowerCase()], list_refs: [] } });
  });

  it.each([
    [{}, 'filter_required', 'body.filters'],
    [{ addresses: ['0x12'] }, 'invalid_address', 'body.addresses[0]'],
    [{ addresses: [A, 'zz'] }, 'invalid_address', 'body.addresses[1]'],
    [{ addresses: [A, A_TYPO] }, 'invalid_address_checksum', 'body.addresses[1]'],
    [{ addresses: [README_TYPO] }, 'invalid_address_checksum', 'body.addresses[0]'],
    [
      { filters: { any: [{ address: { in: [A] } }, { address: { in: [B, A_TYPO] } }] } },
      'invalid_address_checksum',
      'body.filters.any[1].address.in[1]',
    ],
    [
      { filters: { all: [{ address: { in: [A] } }, { contract: { in: [A_TYPO] } }] } },
      'invalid_address_checksum',
      'body.filters.all[1].contract.in[0]',
    ],
    [{ list_refs: ['nope'] }, 'invalid_list_ref', 'body.list_refs[0]'],
    [
      { filters: { any: [{ address: { in: [A] } }, { address: { in: [A, '0xzz'] } }] } },
      'invalid_address',
      'body.filters.any[1].address.in[1]',
    ],
    [{ filters: { all: [{ address: {} }] } }, 'invalid_filter', 'body.filters.all[0].address'],
    [
      { filters: { all: [{ address: { in: [A] }, contract: { in: [A] } }] } },
      'invalid_filter',
      'body.filters.all[0]',
    ],
    [{ filters: { any: [{ bogus: 1 }] } }, 'invalid_filter', 'body.filters.any[0]'],
    [{ filters: { all: [] } }, 'invalid_filter', 'body.filters.all'],
    [
      { filters: { topic: { position: 4, in: [T] } } },
      'invalid_filter',
      'body.filters.topic.position',
    ],
    [
      { filters: { topic: { position: 1, in: ['0x1'] } } },
      'invalid_topic',
      'body.filters.topic.in[0]',
    ],
    [{ filters: nest(9) }, 'filter_too_deep', 'body.filters.not.not.not.not.not.not.not.not'],
    [
      { filters: { any: Array.from({ length: 256 }, () => ({ address: { in: [A] } })) } },
      'filter_too_large',
      'body.filters.any[255]',
    ],
    [
      { filters: { tx_hash: { in: [H, '0x' + 'e'.repeat(63)] } } },
      'invalid_tx_hash',
      'body.filters.tx_hash.in[1]',
    ],
    [
      { filters: { any: [{ address: { in: [A] } }, { tx_hash: { in: [A] } }] } },
      'invalid_tx_hash',
      'body.filters.any[1].tx_hash.in[0]',
    ],
    [{ filters: { tx_hash: { in: [] } } }, 'invalid_filter', 'body.filters.tx_hash.in'],
    [{ filters: { tx_hash: { in: [H], dir: 'in' } } }, 'invalid_filter', 'body.filters.tx_hash'],
    [
      {
        filters: {
          any: [
            { tx_hash: { in: Array.from({ length: 600 }, () => H) } },
            { tx_hash: { in: Array.from({ length: 401 }, () => H) } },
          ],
        },
      },
      'filter_too_large',
      'body.filters.any[1].tx_hash.in[400]',
    ],
    [
      { filters: { tx_hash: { in: Array.from({ length: 1_001 }, () => H) } } },
      'filter_too_large',
      'body.filters.tx_hash.in[1000]',
    ],
    [{ trigger_type: 'tx_confirmation', addresses: [A] }, 'tx_hash_required', 'body.filters'],
    [
      {
        trigger_type: 'tx_confirmation',
        filters: { any: [{ tx_hash: { in: [H] } }, { address: { in: [A] } }] },
      },
      'tx_hash_required',
      'body.filters',
    ],
    [
      { trigger_type: 'tx_confirmation', filters: { not: { tx_hash: { in: [H] } } } },
      'tx_hash_required',
      'body.filters',
    ],
  ])('case %# → %s', (input, code, path) => {
    expect(errorOf(input as FilterInput)).toEqual({ code, path });
  });

  it('lower-cases watched transaction hashes and counts none of them as addresses', () => {
    const f = normalizeFilter({
      trigger_type: 'tx_confirmation',
      filters: { tx_hash: { in: [H] } },
      addresses: [A],
    });
    expect(f.tree).toEqual({
      all: [
        { tx_hash: { in: [H.toLowerCase()] } },
        { address: { dir: 'any', in: [A.toLowerCase()], list_refs: [] } },
      ],
    });
    expect(f.inlineAddresses).toBe(1);
    expect(collectAddresses(f.tree)).toEqual([A.toLowerCase()]);
    // Other trigger types may use the leaf too (every log of a watched transaction).
    expect(() =>
      normalizeFilter({ trigger_type: 'address_activity', filters: { tx_hash: { in: [H] } } }),
    ).not.toThrow();
  });

  it.each([
    ['a tx_hash leaf', { tx_hash: { in: [H] } }, true],
    [
      'all with a tx_hash child',
      { all: [{ tx_hash: { in: [H] } }, { address: { in: [A] } }] },
      true,
    ],
    ['any of tx_hash leaves', { any: [{ tx_hash: { in: [H] } }, { tx_hash: { in: [T] } }] }, true],
    [
      'any with an address child',
      { any: [{ tx_hash: { in: [H] } }, { address: { in: [A] } }] },
      false,
    ],
    [
      'all of not and tx_hash',
      { all: [{ not: { address: { in: [A] } } }, { tx_hash: { in: [H] } }] },
      true,
    ],
    ['not tx_hash', { not: { tx_hash: { in: [H] } } }, false],
    ['an address leaf', { address: { in: [A] } }, false],
  ])('needsTxHash: %s → %s', (_name, filters, expected) => {
    expect(needsTxHash(normalizeFilter({ filters }).tree)).toBe(expected);
  });

  // As a client sends it: JSON text parsed by JSON.parse (iterative), never built by recursion.
  const deep = (depth: number, open: string, close: string): unknown =>
    JSON.parse(
      open.repeat(depth) +
        '{"address":{"dir":"any","in":["0x00000000000000000000000000000000000e0001"]}}' +
        close.repeat(depth),
    );

  it.each([
    ['not', 1_000, '{"not":', '}', 'body.filters' + '.not'.repeat(8)],
    ['not', 100_000, '{"not":', '}', 'body.filters' + '.not'.repeat(8)],
    ['all', 1_000, '{"all":[', ']}', 'body.filters' + '.all[0]'.repeat(8)],
    ['any', 200_000, '{"any":[', ']}', 'body.filters' + '.any[0]'.repeat(8)],
  ])('a %s chain %i deep is filter_too_deep, before any recursive parse', (_k, d, o, c, path) => {
    expect(errorOf({ filters: deep(d, o, c) })).toEqual({ code: 'filter_too_deep', path });
  });

  it('names the first node over the depth in the order the walk visits them', () => {
    const filters = { any: [{ address: { in: [A] } }, nest(8), { not: nest(7) }] };
    expect(errorOf({ filters })).toEqual({
      code: 'filter_too_deep',
      path: 'body.filters.any[1]' + '.not'.repeat(7),
    });
  });

  it('a node list wider than the schema allows is filter_too_large, not a schema error', () => {
    const filters = { all: Array.from({ length: 300 }, () => ({ address: { in: [A] } })) };
    expect(errorOf({ filters })).toEqual({
      code: 'filter_too_large',
      path: 'body.filters.all[255]',
    });
  });

  it('counts any number of inline addresses and list references: their limits are plan caps (409), not shape errors', () => {
    const many = Array.from({ length: 100_001 }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`);
    const b32 = 'abcdefghijklmnopqrstuvwxyz234567';
    const lists = Array.from(
      { length: 1_001 },
      (_, i) => `al_${'a'.repeat(22)}${b32[i % 32]}${b32[Math.floor(i / 32)]}`,
    );
    expect(normalizeFilter({ addresses: many }).inlineAddresses).toBe(100_001);
    expect(normalizeFilter({ filters: { contract: { in: many } } }).inlineAddresses).toBe(100_001);
    const leaf = normalizeFilter({ filters: { address: { list_refs: lists } } });
    expect(leaf.referencedLists).toHaveLength(1_001);
    expect(normalizeFilter({ list_refs: lists }).referencedLists).toHaveLength(1_001);
  });

  it.each([
    ['the shorthand', { list_refs: [L, L, L2] }, 'body.list_refs[1]', L],
    [
      'a leaf',
      { filters: { address: { dir: 'in', list_refs: [L, L2, L2] } } },
      'body.filters.address.list_refs[2]',
      L2,
    ],
    [
      'a nested leaf',
      { filters: { not: { address: { list_refs: Array(11).fill(L) } } } },
      'body.filters.not.address.list_refs[1]',
      L,
    ],
  ])(
    'a list twice in one list_refs of %s: 400 duplicate_list_ref naming it',
    (_, input, path, id) => {
      expect(errorOf(input)).toEqual({ code: 'duplicate_list_ref', path });
      expect(() => normalizeFilter(input)).toThrow(
        `address list ${id} is already in this list_refs`,
      );
    },
  );

  it('one list in two leaves is two references: kept, each counted (no de-duplication)', () => {
    const f = normalizeFilter({
      filters: {
        all: [
          { address: { dir: 'in', list_refs: [L, L2] } },
          { not: { address: { dir: 'out', list_refs: [L] } } },
        ],
      },
      list_refs: [L2],
    });
    expect(f.referencedLists).toEqual([L, L2]);
    expect(f.listReferences).toEqual([L, L2, L, L2]);
  });

  it('accepts depth 8 and 256 nodes', () => {
    expect(() => normalizeFilter({ filters: nest(8) })).not.toThrow();
    expect(
      normalizeFilter({
        filters: { any: Array.from({ length: 255 }, () => ({ address: { in: [A] } })) },
      }).inlineAddresses,
    ).toBe(255);
  });
});

describe('EVM addresses in any case (ADR 0403)', () => {
  const lower = A.toLowerCase();
  const upper = `0x${A.slice(2).toUpperCase()}`;

  it('accepts all lower, all upper and a right checksum, storing lower case', () => {
    const f = normalizeFilter({ addresses: [lower, upper, A] });
    expect(f.addresses).toEqual([lower, lower, lower]);
    expect(normalizeAddresses([lower, upper, A, B], 'body.addresses')).toEqual([lower, B]);
  });

  it('names the address checksummed in a wrong checksum refusal', () => {
    try {
      normalizeFilter({ addresses: [README_TYPO] });
      throw new Error('accepted');
    } catch (error) {
      if (!isDomainError(error)) throw error;
      expect(error.kind).toBe('invalid');
      expect(error.details).toEqual({
        location: 'body',
        path: 'body.addresses[0]',
        expected: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      });
      expect(error.message).toContain('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
    }
  });

  it('a bulk change refuses all, with the first refused entry and every one listed', () => {
    try {
      normalizeAddresses([B, A_TYPO, A, 'zz', README_TYPO], 'body.addresses');
      throw new Error('accepted');
    } catch (error) {
      if (!isDomainError(error)) throw error;
      expect(error.code).toBe('invalid_address_checksum');
      expect(error.details).toEqual({
        location: 'body',
        path: 'body.addresses[1]',
        expected: A,
        refused: [
          { path: 'body.addresses[1]', error: 'invalid_address_checksum', expected: A },
          { path: 'body.addresses[3]', error: 'invalid_address' },
          {
            path: 'body.addresses[4]',
            error: 'invalid_address_checksum',
            expected: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
          },
        ],
        refused_total: 3,
      });
    }
  });

  it('lists at most 100 refused entries and counts them all', () => {
    try {
      normalizeAddresses(
        Array.from({ length: 150 }, () => 'zz'),
        'body.addresses',
      );
      throw new Error('accepted');
    } catch (error) {
      if (!isDomainError(error)) throw error;
      expect(error.code).toBe('invalid_address');
      expect(error.details?.['path']).toBe('body.addresses[0]');
      expect(error.details?.['refused']).toHaveLength(100);
      expect(error.details?.['refused_total']).toBe(150);
    }
  });
});
