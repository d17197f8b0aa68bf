import { Metadata } from '@grpc/grpc-js';
import { DomainError } from '@meridian/errors';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import type { RelayService } from '../relay/relay.service';
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
    authorize: async () => ({ token: { accountId: 'a' }, network: { key: 'polygon-mainnet' } }),
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
