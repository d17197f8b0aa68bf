import type { DomainError } from '@meridian/errors';
import { batchSizeError, jsonRpcErrorOf } from '@meridian/jsonrpc';
import { checkGrowingFilterLogs, checkLogsRange } from './logs-range';

describe('checkLogsRange (eth_getLogs and eth_newFilter block ranges, ADR 0211)', () => {
  const CAP = 10_000;
  const HEAD = 20_000_000;
  const codeOf = (
    filter: unknown,
    head: number | undefined = HEAD,
    method = 'eth_getLogs',
  ): string | null => checkLogsRange(method, [filter], CAP, head)?.code ?? null;

  it.each([
    [
      'both numbers, exactly the cap (0x0..0x270f = 10,000 blocks)',
      { fromBlock: '0x0', toBlock: '0x270f' },
      null,
    ],
    [
      'both numbers, one over (0x0..0x2710 = 10,001 blocks)',
      { fromBlock: '0x0', toBlock: '0x2710' },
      'limit_exceeded',
    ],
    ['one block', { fromBlock: '0x10', toBlock: '0x10' }, null],
    [
      'from after to (the node refuses it, not a range)',
      { fromBlock: '0x10', toBlock: '0x1' },
      null,
    ],
    ['earliest is block 0', { fromBlock: 'earliest', toBlock: '0x186a0' }, 'limit_exceeded'],
    ['earliest..0x270f', { fromBlock: 'earliest', toBlock: '0x270f' }, null],
    ['toBlock omitted = head', { fromBlock: '0x0' }, 'limit_exceeded'],
    ['toBlock null = head', { fromBlock: '0x0', toBlock: null }, 'limit_exceeded'],
    ['toBlock latest', { fromBlock: '0x0', toBlock: 'latest' }, 'limit_exceeded'],
    ['toBlock safe', { fromBlock: '0x0', toBlock: 'safe' }, 'limit_exceeded'],
    ['toBlock finalized', { fromBlock: '0x0', toBlock: 'finalized' }, 'limit_exceeded'],
    ['toBlock pending', { fromBlock: '0x0', toBlock: 'pending' }, 'limit_exceeded'],
    ['earliest..latest', { fromBlock: 'earliest', toBlock: 'latest' }, 'limit_exceeded'],
    [
      'the last 10,000 blocks up to the head',
      { fromBlock: `0x${(HEAD - 9_999).toString(16)}` },
      null,
    ],
    [
      'the last 10,001 blocks up to the head',
      { fromBlock: `0x${(HEAD - 10_000).toString(16)}` },
      'limit_exceeded',
    ],
    ['nothing given: latest..latest', {}, null],
    ['latest..pending', { fromBlock: 'latest', toBlock: 'pending' }, null],
    ['a blockHash query is one block', { blockHash: `0x${'ab'.repeat(32)}` }, null],
    [
      'blockHash with a fromBlock (geth and anvil refuse both)',
      { blockHash: `0x${'ab'.repeat(32)}`, fromBlock: '0x0' },
      'invalid_params',
    ],
    [
      'tags in any case (anvil takes them)',
      { fromBlock: 'EARLIEST', toBlock: 'Latest' },
      'limit_exceeded',
    ],
    ['a 0X prefix (geth and anvil take it)', { fromBlock: '0X0', toBlock: '0X10' }, null],
    [
      'a 400-digit block number',
      { fromBlock: '0x0', toBlock: `0x${'f'.repeat(400)}` },
      'limit_exceeded',
    ],
    ['a decimal string', { fromBlock: '0', toBlock: '0x1' }, 'invalid_params'],
    ['a JSON number', { fromBlock: 0, toBlock: '0x1' }, 'invalid_params'],
    ['an unknown tag', { fromBlock: 'genesis' }, 'invalid_params'],
  ])('%s', (_name, filter, code) => {
    expect(codeOf(filter)).toBe(code);
  });

  it('a filter that is not an object is invalid params', () => {
    expect(codeOf('nope')).toBe('invalid_params');
    expect(codeOf([])).toBe('invalid_params');
    expect(checkLogsRange('eth_getLogs', [], CAP, HEAD)?.message).toBe(
      'invalid params: eth_getLogs takes one filter object',
    );
  });

  it('eth_newFilter has the same cap (the range eth_getFilterLogs of the filter reads)', () => {
    expect(codeOf({ fromBlock: 'earliest' }, HEAD, 'eth_newFilter')).toBe('limit_exceeded');
    expect(codeOf({ fromBlock: '0x0', toBlock: '0x2710' }, HEAD, 'eth_newFilter')).toBe(
      'limit_exceeded',
    );
    expect(codeOf({ fromBlock: 'latest' }, HEAD, 'eth_newFilter')).toBeNull();
    expect(checkLogsRange('eth_newFilter', [{ fromBlock: '0x0' }], CAP, HEAD)?.message).toBe(
      'limit exceeded: eth_newFilter block range 20000001 is larger than 10000 blocks (both ends count)',
    );
  });

  it('the refusal names the count of blocks, both ends included', () => {
    expect(
      checkLogsRange('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x2710' }], CAP, HEAD)?.message,
    ).toBe(
      'limit exceeded: eth_getLogs block range 10001 is larger than 10000 blocks (both ends count)',
    );
  });

  it('the refusal carries data {limit, size}, as the batch refusal does (a client splits, not retries)', () => {
    const refused = checkLogsRange(
      'eth_getLogs',
      [{ fromBlock: '0x0', toBlock: '0x2710' }],
      CAP,
      HEAD,
    );
    const errorOf = (refusal: DomainError | null) =>
      refusal === null ? undefined : jsonRpcErrorOf(refusal);
    expect(errorOf(refused)).toEqual({
      code: -32005,
      message:
        'limit exceeded: eth_getLogs block range 10001 is larger than 10000 blocks (both ends count)',
      data: { limit: 10_000, size: 10_001 },
    });
    // The same form as the batch refusal's data.
    expect(errorOf(refused)?.data).toEqual(batchSizeError(10_001, 10_000)?.data);
    const growing = checkGrowingFilterLogs(0, CAP, 10_000);
    expect(errorOf(growing)?.data).toEqual({ limit: 10_000, size: 10_001 });
    // A 400-digit bound: no number to give as the size.
    const huge = checkLogsRange(
      'eth_getLogs',
      [{ fromBlock: '0x0', toBlock: `0x${'f'.repeat(400)}` }],
      CAP,
      HEAD,
    );
    expect(errorOf(huge)?.data).toEqual({ limit: 10_000 });
  });

  it('head unknown: a range ending at the head is not sent (retryable -32000); others are judged as usual', () => {
    const unknown = checkLogsRange('eth_getLogs', [{ fromBlock: '0x0' }], CAP, undefined);
    expect(unknown).toMatchObject({ code: 'head_unknown', kind: 'unavailable', retryable: true });
    expect(codeOf({ fromBlock: 'latest' }, undefined)).toBeNull();
    expect(codeOf({ fromBlock: '0x0', toBlock: '0x10' }, undefined)).toBeNull();
    expect(codeOf({ fromBlock: '0x0', toBlock: '0x2710' }, undefined)).toBe('limit_exceeded');
    expect(codeOf({ blockHash: `0x${'ab'.repeat(32)}` }, undefined)).toBeNull();
  });
});
