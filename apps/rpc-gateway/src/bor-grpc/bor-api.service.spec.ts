import { Metadata } from '@grpc/grpc-js';
import { DomainError } from '@meridian/errors';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import { toGrpcStatus } from '@meridian/platform-grpc';
import { answerTooLarge } from '../relay/gateway-errors';
import type { RelayService } from '../relay/relay.service';
import { isBilled, type CallAnswer } from '../upstreams/upstream-router';
import { BorApiService } from './bor-api.service';
import { toH256 } from './bor-mapping';

/**
 * Every BorApi method checks its arguments before the token or the node is asked: a missing or
 * malformed one is INVALID_ARGUMENT (kind `invalid`), never read as a default (latest, the zero
 * hash).
 */
describe('BorApiService argument checks', () => {
  const relayed: unknown[] = [];
  const relay = {
    authorization: async () => ({ token: { accountId: 'a' }, network: { key: 'polygon-mainnet' } }),
    relayInternal: async (_token: unknown, _network: unknown, calls: unknown[]) => {
      relayed.push(...calls);
      return calls.map(() => ({ kind: 'result', resultText: 'null' }));
    },
  } as unknown as RelayService;
  const service = new BorApiService(relay, {} as GatewayMetrics);
  const md = new Metadata();
  md.set('x-access-token', 'tok');
  const hash = toH256(`0x${'ab'.repeat(32)}`);
  const vote = (over: Partial<Parameters<BorApiService['getVoteOnHash']>[0]>) => ({
    startBlockNumber: 1n,
    endBlockNumber: 2n,
    hash: `0x${'ab'.repeat(32)}`,
    milestoneId: 'milestone-1',
    ...over,
  });

  beforeEach(() => (relayed.length = 0));

  it.each([
    ['HeaderByNumber with an empty number', () => service.headerByNumber('', md)],
    ['HeaderByNumber with blanks for a number', () => service.headerByNumber('   ', md)],
    ['BlockByNumber with an empty number', () => service.blockByNumber('', md)],
    ['GetAuthor with an empty number', () => service.getAuthor('', md)],
    ['GetTdByNumber with an empty number', () => service.getTdByNumber('', md)],
    ['GetTdByNumber with a word', () => service.getTdByNumber('yesterday', md)],
    ['GetTdByHash without a hash', () => service.getTdByHash(undefined, md)],
    ['TransactionReceipt without a hash', () => service.transactionReceipt(undefined, md)],
    ['BorBlockReceipt without a hash', () => service.borBlockReceipt(undefined, md)],
    ['GetRootHash with end before start', () => service.getRootHash(5n, 4n, md)],
    ['GetRootHash beyond 2^53', () => service.getRootHash(0n, 2n ** 60n, md)],
    [
      'GetVoteOnHash with end before start',
      () => service.getVoteOnHash(vote({ endBlockNumber: 0n }), md),
    ],
    ['GetVoteOnHash without a hash', () => service.getVoteOnHash(vote({ hash: '' }), md)],
    [
      'GetVoteOnHash with a hash that is not hex',
      () => service.getVoteOnHash(vote({ hash: 'abc' }), md),
    ],
    [
      'GetVoteOnHash without a milestoneId',
      () => service.getVoteOnHash(vote({ milestoneId: '' }), md),
    ],
    [
      'GetStartBlockHeimdallSpanID beyond 2^53',
      () => service.getStartBlockHeimdallSpanID(2n ** 64n - 1n, md),
    ],
    ['GetBlockInfoInBatch with end before start', () => service.getBlockInfoInBatch(3n, 2n, md)],
    ['GetBlockInfoInBatch over 100 blocks', () => service.getBlockInfoInBatch(0n, 100n, md)],
  ])('%s → INVALID_ARGUMENT, nothing relayed', async (_name, run) => {
    const error = await run().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).kind).toBe('invalid');
    expect(relayed).toEqual([]);
  });

  it('a hash that was sent, even all zero, is looked up (NOT_FOUND when the node has none)', async () => {
    const error = await service.getTdByHash({}, md).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'not_found' });
    expect(relayed).toEqual([expect.objectContaining({ method: 'eth_getBlockByHash' })]);
    await service.transactionReceipt(hash, md).catch(() => undefined);
    expect(relayed).toHaveLength(2);
  });
});

/**
 * QA: a node's "header not found" (-32000) came back UNIMPLEMENTED, which the README calls free,
 * while it was billed. UNIMPLEMENTED is now exactly the node error `isBilled` leaves free
 * (-32601); a block the node does not have is NOT_FOUND, billed like every node answer.
 */
describe('BorApiService: a node error maps to the gRPC status its billing says', () => {
  let answer: CallAnswer;
  const relay = {
    authorization: async () => ({ token: { accountId: 'a' }, network: { key: 'polygon-mainnet' } }),
    relayInternal: async (_token: unknown, _network: unknown, calls: unknown[]) =>
      calls.map(() => answer),
  } as unknown as RelayService;
  const service = new BorApiService(relay, {} as GatewayMetrics);
  const md = new Metadata();
  md.set('x-access-token', 'tok');
  const nodeError = (code: number, message: string): CallAnswer =>
    ({ kind: 'node_error', error: { code, message } }) as unknown as CallAnswer;

  it.each([
    [-32000, 'header not found', 'not_found', 'block not found', true],
    [-32000, 'block 0x999 does not exist', 'not_found', 'block not found', true],
    [
      -32601,
      'the method eth_getBlockByNumber does not exist/is not available',
      'unimplemented',
      'eth_getBlockByNumber is not answered by the upstream nodes of this network',
      false,
    ],
    [
      -32000,
      'pruning: history not available',
      'internal',
      'upstream node error: pruning: history not available',
      true,
    ],
    [
      -32000,
      'feature not supported',
      'internal',
      'upstream node error: feature not supported',
      true,
    ],
  ])('%d %s → %s', async (code, message, kind, words, billed) => {
    answer = nodeError(code, message);
    const error = (await service
      .headerByNumber('0x999', md)
      .catch((e: unknown) => e)) as DomainError;
    expect(error).toBeInstanceOf(DomainError);
    expect({ kind: error.kind, message: error.message }).toEqual({ kind, message: words });
    // The one billing rule decides; UNIMPLEMENTED is the free status and no other is.
    expect(isBilled(answer)).toBe(billed);
    expect(error.kind === 'unimplemented').toBe(!billed);
  });

  it('an answer past MAX_RESPONSE_BYTES is RESOURCE_EXHAUSTED with its message, unbilled (ADR 0215)', async () => {
    answer = { kind: 'gateway_error', error: answerTooLarge(32 * 1024 * 1024) };
    const error = (await service
      .getBlockInfoInBatch(0n, 99n, md)
      .catch((e: unknown) => e)) as DomainError;
    expect(error).toBeInstanceOf(DomainError);
    expect(toGrpcStatus(error)).toMatchObject({
      code: 8,
      details:
        'limit exceeded: response too large: over 32 MiB; narrow the block range or split the batch',
    });
    expect(isBilled(answer)).toBe(false);
  });

  it('a receipt the node does not have is NOT_FOUND "receipt not found"', async () => {
    answer = nodeError(-32000, 'transaction indexing is in progress: receipt not found');
    const error = await service
      .transactionReceipt(toH256(`0x${'ab'.repeat(32)}`), md)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'not_found', message: 'receipt not found' });
  });
});
