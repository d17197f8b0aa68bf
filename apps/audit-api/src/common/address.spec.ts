import { DomainError } from '@meridian/errors';
import { parseAddress } from './address';
import { parseAuditRequest } from './audit-request';

const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as DomainError).code;
  }
};

describe('parseAddress', () => {
  it.each([
    [
      'checksummed EVM',
      '0x098B716B8Aaf21512996dC57EB0615e2383E2f96',
      'evm',
      '0x098b716b8aaf21512996dc57eb0615e2383e2f96',
      undefined,
    ],
    [
      'lower-case EVM (no checksum to check)',
      '0x098b716b8aaf21512996dc57eb0615e2383e2f96',
      'evm',
      '0x098b716b8aaf21512996dc57eb0615e2383e2f96',
      undefined,
    ],
    [
      'upper-case EVM hex',
      '0x098B716B8AAF21512996DC57EB0615E2383E2F96',
      'evm',
      '0x098b716b8aaf21512996dc57eb0615e2383e2f96',
      undefined,
    ],
    [
      'bad checksum',
      '0x098b716B8Aaf21512996dC57EB0615e2383E2f96',
      'evm',
      null,
      'invalid_address_checksum',
    ],
    ['too short', '0x098b', 'evm', null, 'invalid_address'],
    ['no 0x', '098b716b8aaf21512996dc57eb0615e2383e2f96', 'evm', null, 'invalid_address'],
    [
      'TRON base58',
      'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
      'tron',
      'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
      undefined,
    ],
    [
      'TRON with 0 (not base58)',
      'T0YZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
      'tron',
      null,
      'invalid_address',
    ],
    [
      'TRON from the QA report (valid ...m9)',
      'TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9',
      'tron',
      'TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9',
      undefined,
    ],
    [
      'TRON with its last character changed (base58check fails)',
      'TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m8',
      'tron',
      null,
      'invalid_address_checksum',
    ],
    [
      'TRON with one middle character changed',
      'TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb4m9',
      'tron',
      null,
      'invalid_address_checksum',
    ],
    [
      // A valid base58check string starting with T whose version byte is 0x42, not 0x41.
      'TRON-looking base58check of another version byte',
      'TZwy8nZDEjdqgwYW1vqvTkTZW7SEYfoe8d',
      'tron',
      null,
      'invalid_address',
    ],
    ['SUI full 32 bytes', `0x${'Ab'.repeat(32)}`, 'sui', `0x${'ab'.repeat(32)}`, undefined],
    ['SUI short form (not a 32-byte address)', '0x2', 'sui', null, 'invalid_address'],
    [
      'a 20-byte EVM address sent as SUI (was zero-padded)',
      '0x098b716b8aaf21512996dc57eb0615e2383e2f96',
      'sui',
      null,
      'invalid_address',
    ],
    ['SUI of 65 hex digits', `0x${'a'.repeat(65)}`, 'sui', null, 'invalid_address'],
    [
      'EVM with a leading space (refused, not trimmed)',
      ' 0x098b716b8aaf21512996dc57eb0615e2383e2f96',
      'evm',
      null,
      'invalid_address',
    ],
    [
      'EVM with a trailing newline',
      '0x098b716b8aaf21512996dc57eb0615e2383e2f96\n',
      'evm',
      null,
      'invalid_address',
    ],
    [
      'TRON with a trailing space',
      'TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9 ',
      'tron',
      null,
      'invalid_address',
    ],
  ] as const)('%s', (_name, input, format, key, code) => {
    expect(codeOf(() => parseAddress(input, format, 'address'))).toBe(code);
    if (key) expect(parseAddress(input, format, 'address').key).toBe(key);
  });

  it('shows EVM addresses as EIP-55 and names the field in the codes', () => {
    expect(
      parseAddress('0x098b716b8aaf21512996dc57eb0615e2383e2f96', 'evm', 'contract_address'),
    ).toEqual({
      key: '0x098b716b8aaf21512996dc57eb0615e2383e2f96',
      display: '0x098B716B8Aaf21512996dC57EB0615e2383E2f96',
    });
    expect(
      codeOf(() => parseAddress('TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m8', 'tron', 'contract_address')),
    ).toBe('invalid_contract_address_checksum');
  });
});

describe('parseAddress: a wrong EIP-55 checksum', () => {
  const errorOf = (field: string): DomainError => {
    try {
      parseAddress('0x70997970C51812dc3A010C7d01b50e0d17dC79C8', 'evm', field);
    } catch (error) {
      return error as DomainError;
    }
    throw new Error('not refused');
  };

  it.each(['address', 'contract_address'])(
    'names the checksummed form in %s’s message and `expected`, as the webhook API does',
    (field) => {
      const error = errorOf(field);
      expect([error.code, error.message, error.details]).toEqual([
        `invalid_${field}_checksum`,
        `${field} has mixed case but an invalid EIP-55 checksum (a typo?); checksummed it is ` +
          '0x70997970C51812dc3A010C7d01b50e0d17dc79C8, or give it all lower case',
        { field, expected: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' },
      ]);
    },
  );

  it('TRON keeps its base58check message with no expected form', () => {
    try {
      parseAddress('TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m8', 'tron', 'address');
      throw new Error('not refused');
    } catch (error) {
      expect((error as DomainError).details).toEqual({ field: 'address' });
    }
  });
});

describe('parseAuditRequest', () => {
  const A = '0x098b716b8aaf21512996dc57eb0615e2383e2f96';
  it.each([
    [null, 'malformed_body'],
    ['text', 'malformed_body'],
    [{ address: A }, 'missing_network'],
    [{ network: 5, address: A }, 'invalid_network'],
    [{ network: 'SOL', address: A }, 'unknown_network'],
    [{ network: 'ETH' }, 'missing_address'],
    [{ network: 'ETH', address: 5 }, 'invalid_address'],
    [{ network: 'eth', address: A }, undefined],
    [{ network: 'Bsc', address: A }, undefined],
    // Whitespace around the network is refused as around the address (QA: " ETH" was taken).
    [{ network: ' ETH', address: A }, 'invalid_network'],
    [{ network: 'ETH\n', address: A }, 'invalid_network'],
    [{ network: 'ETH', address: ` ${A}` }, 'invalid_address'],
    [{ network: 'ETH', address: A, chain: 'x' }, 'malformed_body'],
    [{ network: 'ETH', address: A, contract_address: A }, 'malformed_body'],
    // A body refused before strictness keeps its code: the field checks come first.
    [{ netwrok: 'ETH', address: A }, 'missing_network'],
    [{ network: 'ETH', contract_address: A }, 'missing_address'],
  ])('%j → %s', (body, code) => {
    expect(codeOf(() => parseAuditRequest({ body, query: {} }, 'address'))).toBe(code);
  });

  it('maps BSC to BNB and keeps the field name of rug pull requests in its codes', () => {
    const request = (body: unknown) => ({ body, query: {} });
    expect(parseAuditRequest(request({ network: 'bsc', address: A }), 'address').chain.code).toBe(
      'BNB',
    );
    expect(codeOf(() => parseAuditRequest(request({ network: 'ETH' }), 'contract_address'))).toBe(
      'missing_contract_address',
    );
  });

  it('names an unknown field or query parameter, as billing-ledger and webhook-matcher do', () => {
    const errorOf = (request: { body: unknown; query: unknown }) => {
      try {
        parseAuditRequest(request, 'contract_address');
      } catch (error) {
        return [(error as DomainError).code, (error as DomainError).message];
      }
      return undefined;
    };
    const body = { network: 'ETH', contract_address: A };
    expect(errorOf({ body: { ...body, address: A }, query: {} })).toEqual([
      'malformed_body',
      'body: unknown field "address"',
    ]);
    expect(errorOf({ body, query: { network: 'ETH' } })).toEqual([
      'invalid_query',
      'query: unknown parameter "network"',
    ]);
    expect(errorOf({ body, query: undefined })).toBeUndefined();
  });
});
