import { fromH160, fromH256, toBlockTag, toH160, toH256, toHeader } from './bor-mapping';

describe('bor mapping', () => {
  it.each([`0x${'01'.repeat(32)}`, `0x${'ff'.repeat(32)}`, `0x${'0'.repeat(63)}1`])(
    'H256 round-trips %s',
    (hash) => {
      expect(fromH256(toH256(hash) as never)).toBe(hash);
    },
  );
  it.each([`0x${'ab'.repeat(20)}`, `0x${'0'.repeat(39)}1`])('H160 round-trips %s', (address) => {
    expect(fromH160(toH160(address) as never)).toBe(address);
  });
  it.each([
    ['latest', 'latest'],
    ['', undefined],
    ['  ', undefined],
    ['finalized', 'finalized'],
    ['100', '0x64'],
    ['0x0064', '0x64'],
    ['yesterday', undefined],
    ['-1', undefined],
    ['18446744073709551615', '0xffffffffffffffff'],
    ['18446744073709551616', undefined],
    ['0x10000000000000000', undefined],
    ['0xffffffffffffffffff', undefined],
  ])('toBlockTag(%j) = %j', (input, expected) => expect(toBlockTag(input)).toBe(expected));
  it('maps a JSON-RPC block header', () => {
    const header = toHeader({
      number: '0x10',
      timestamp: '0x5',
      gasLimit: '0x1c9c380',
      difficulty: '0x0',
      baseFeePerGas: '0x3b9aca00',
      miner: `0x${'00'.repeat(20)}`,
    });
    expect(header.number).toBe(16n);
    expect(header.time).toBe(5n);
    expect(header.difficulty).toEqual(new Uint8Array());
    expect(Buffer.from(header.baseFee as Uint8Array).toString('hex')).toBe('3b9aca00');
  });
});
