import { randomBytes } from 'node:crypto';
import { AddressTable } from './address-table';

const address = () => `0x${randomBytes(20).toString('hex')}`;

describe('AddressTable', () => {
  it('agrees with a Map through random sets, deletes and growth', () => {
    const table = new AddressTable(16);
    const model = new Map<string, number>();
    const pool = Array.from({ length: 3_000 }, address);
    // Addresses that share their leading words (vanity prefixes) probe into each other.
    for (let i = 0; i < 200; i++)
      pool.push(`0x${'0'.repeat(32)}${i.toString(16).padStart(8, '0')}`);
    let seed = 7;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    for (let step = 0; step < 40_000; step++) {
      const a = pool[next() % pool.length]!;
      if (next() % 3 === 0) expect(table.delete(a)).toBe(model.delete(a));
      else {
        const v = next() % 1_000;
        table.set(a, v);
        model.set(a, v);
      }
      if (step % 997 === 0) for (const p of pool) expect(table.get(p)).toBe(model.get(p) ?? -1);
    }
    expect(table.size).toBe(model.size);
    expect(new Map(table.entries())).toEqual(model);
  });

  it('reads either case, and anything that is not an address is absent or refused', () => {
    const table = new AddressTable();
    const a = address();
    table.set(a.toUpperCase().replace('0X', '0x'), 5);
    expect(table.get(a)).toBe(5);
    expect(table.has(`0X${a.slice(2)}`)).toBe(true);
    expect([...table.entries()]).toEqual([[a, 5]]);
    for (const bad of ['', '0x', a.slice(0, 41), `${a}0`, `0x${'g'.repeat(40)}`, `1x${a.slice(2)}`])
      expect(table.get(bad)).toBe(-1);
    expect(() => table.set('0x12', 1)).toThrow(RangeError);
    expect(() => table.set(address(), -1)).toThrow(RangeError);
  });

  it('answers after a delete from the one-entry cache correctly', () => {
    const table = new AddressTable();
    const a = address();
    table.set(a, 1);
    expect(table.get(a)).toBe(1);
    table.delete(a);
    expect(table.get(a)).toBe(-1);
    table.set(a, 2);
    expect(table.get(a)).toBe(2);
  });

  it('reserve makes room once: what it held stays, and filling the reserved size allocates nothing', () => {
    const table = new AddressTable(16);
    const held = Array.from({ length: 20 }, address);
    held.forEach((a, i) => table.set(a, i));
    table.reserve(5_000);
    held.forEach((a, i) => expect(table.get(a)).toBe(i));
    const arrays = () => [table['slots'], table['keys'], table['values'], table['filter']];
    const before = arrays();
    const added = Array.from({ length: 5_000 - held.length }, address);
    added.forEach((a, i) => table.set(a, i));
    arrays().forEach((array, i) => expect(array).toBe(before[i]));
    expect(table.size).toBe(5_000);
    added.forEach((a, i) => expect(table.get(a)).toBe(i));
    // Growth past the reserve still works.
    table.set(address(), 1);
    expect(table['values']).not.toBe(before[2]);
  });
});
