import { status as GrpcStatus, type Metadata } from '@grpc/grpc-js';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { bor } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { GrpcStatusError } from '@meridian/platform-grpc';
import { JSONRPC_ERROR } from '@meridian/jsonrpc';
import type { RelayService } from '../relay/relay.service';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import { safeParse, type CallAnswer, type OutCall } from '../upstreams/upstream-router';
import {
  fromH256,
  toBlockTag,
  toH160,
  toHeader,
  toReceipt,
  totalDifficultyOf,
} from './bor-mapping';

const MAX_BATCH_BLOCKS = 100;

type Out<K extends keyof typeof bor.BorApi.method> = MessageInitShape<
  (typeof bor.BorApi.method)[K]['output']
>;

const call = (method: string, params: unknown[]): OutCall => ({
  method,
  params,
  paramsRaw: JSON.stringify(params),
});

/**
 * BorApi answered from JSON-RPC upstreams. Every method authenticates with `x-access-token`,
 * passes the same balance and rate checks as HTTP, and is metered per JSON-RPC call made.
 * Bor-only calls (bor_getRootHash, bor_getVoteOnHash, eth_getBorBlockReceipt,
 * bor_getStartBlockHeimdallSpanID) are relayed as such; a node that does not know them (any
 * non-Bor EVM node) makes the method answer UNIMPLEMENTED.
 */
export class BorApiService {
  constructor(
    private readonly relay: RelayService,
    readonly metrics: GatewayMetrics,
  ) {}

  async headerByNumber(number: string, metadata: Metadata): Promise<Out<'headerByNumber'>> {
    const block = await this.block(number, metadata);
    return { header: toHeader(block) };
  }

  async blockByNumber(number: string, metadata: Metadata): Promise<Out<'blockByNumber'>> {
    const block = await this.block(number, metadata);
    return { block: { header: toHeader(block) } };
  }

  async transactionReceipt(hash: string, metadata: Metadata): Promise<Out<'transactionReceipt'>> {
    const receipt = await this.one(metadata, call('eth_getTransactionReceipt', [hash]));
    if (receipt === null)
      throw new DomainError('receipt_not_found', 'not_found', 'receipt not found');
    return { receipt: toReceipt(receipt as Record<string, unknown>) };
  }

  async borBlockReceipt(hash: string, metadata: Metadata): Promise<Out<'borBlockReceipt'>> {
    const receipt = await this.one(metadata, call('eth_getBorBlockReceipt', [hash]));
    if (receipt === null)
      throw new DomainError('receipt_not_found', 'not_found', 'receipt not found');
    return { receipt: toReceipt(receipt as Record<string, unknown>) };
  }

  async getRootHash(start: bigint, end: bigint, metadata: Metadata): Promise<Out<'getRootHash'>> {
    if (end < start)
      throw new DomainError(
        'invalid_range',
        'invalid',
        'endBlockNumber is before startBlockNumber',
      );
    const root = await this.one(metadata, call('bor_getRootHash', [Number(start), Number(end)]));
    return { rootHash: String(root) };
  }

  async getVoteOnHash(
    r: { startBlockNumber: bigint; endBlockNumber: bigint; hash: string; milestoneId: string },
    metadata: Metadata,
  ): Promise<Out<'getVoteOnHash'>> {
    const vote = await this.one(
      metadata,
      call('bor_getVoteOnHash', [
        Number(r.startBlockNumber),
        Number(r.endBlockNumber),
        r.hash,
        r.milestoneId,
      ]),
    );
    return { response: vote === true };
  }

  async getStartBlockHeimdallSpanID(
    startBlock: bigint,
    metadata: Metadata,
  ): Promise<Out<'getStartBlockHeimdallSpanID'>> {
    const span = await this.one(
      metadata,
      call('bor_getStartBlockHeimdallSpanID', [Number(startBlock)]),
    );
    return { StartBlock: startBlock, HeimdallSpanID: BigInt(Number(span) || 0) };
  }

  async getAuthor(number: string, metadata: Metadata): Promise<Out<'getAuthor'>> {
    const tag = this.tag(number);
    const auth = await this.auth(metadata);
    const answers = await this.relayCalls(auth, [call('bor_getAuthor', [tag])]);
    const author = answers[0]!;
    if (author.kind === 'result') {
      const value = safeParse(author.resultText);
      if (value === null) throw new DomainError('block_not_found', 'not_found', 'block not found');
      return { author: toH160(value) };
    }
    if (author.kind === 'node_error' && author.error.code === JSONRPC_ERROR.METHOD_NOT_FOUND) {
      // Not a Bor node: the sealer is the block's coinbase.
      const block = await this.block(number, metadata);
      return { author: toH160(block['miner']) };
    }
    throw this.errorOf(author);
  }

  async getTdByHash(hash: string, metadata: Metadata): Promise<Out<'getTdByHash'>> {
    const block = await this.one(metadata, call('eth_getBlockByHash', [hash, false]));
    if (block === null) throw new DomainError('block_not_found', 'not_found', 'block not found');
    return { totalDifficulty: this.td(block as Record<string, unknown>) };
  }

  async getTdByNumber(number: string, metadata: Metadata): Promise<Out<'getTdByNumber'>> {
    const block = await this.block(number, metadata);
    return { totalDifficulty: this.td(block) };
  }

  async getBlockInfoInBatch(
    start: bigint,
    end: bigint,
    metadata: Metadata,
  ): Promise<Out<'getBlockInfoInBatch'>> {
    if (end < start)
      throw new DomainError(
        'invalid_range',
        'invalid',
        'endBlockNumber is before startBlockNumber',
      );
    if (end - start + 1n > BigInt(MAX_BATCH_BLOCKS))
      throw new DomainError(
        'range_too_large',
        'invalid',
        `at most ${MAX_BATCH_BLOCKS} blocks per batch`,
      );
    const auth = await this.auth(metadata);
    const calls: OutCall[] = [];
    for (let n = start; n <= end; n++)
      calls.push(call('eth_getBlockByNumber', [`0x${n.toString(16)}`, false]));
    const answers = await this.relayCalls(auth, calls);
    const blocks = answers.map((a) => {
      if (a.kind !== 'result') throw this.errorOf(a);
      const block = safeParse(a.resultText) as Record<string, unknown> | null;
      if (block === null) throw new DomainError('block_not_found', 'not_found', 'block not found');
      return {
        header: toHeader(block),
        totalDifficulty: totalDifficultyOf(block) ?? 0n,
        author: toH160(block['miner']),
      };
    });
    return { blocks };
  }

  static hashOf(h: Parameters<typeof fromH256>[0]): string {
    return fromH256(h);
  }

  private td(block: Record<string, unknown>): bigint {
    const td = totalDifficultyOf(block);
    if (td === undefined)
      throw new GrpcStatusError(
        GrpcStatus.UNIMPLEMENTED,
        'the upstream nodes of this network do not report totalDifficulty',
      );
    return td;
  }

  private tag(number: string): string {
    const tag = toBlockTag(number);
    if (tag === undefined)
      throw new DomainError(
        'invalid_block_number',
        'invalid',
        `invalid block number "${number}": decimal, 0x-hex or a tag such as latest`,
      );
    return tag;
  }

  private async block(number: string, metadata: Metadata): Promise<Record<string, unknown>> {
    const block = await this.one(metadata, call('eth_getBlockByNumber', [this.tag(number), false]));
    if (block === null || typeof block !== 'object')
      throw new DomainError('block_not_found', 'not_found', 'block not found');
    return block as Record<string, unknown>;
  }

  private async one(metadata: Metadata, out: OutCall): Promise<unknown> {
    const auth = await this.auth(metadata);
    const answer = (await this.relayCalls(auth, [out]))[0]!;
    if (answer.kind === 'result') return safeParse(answer.resultText);
    throw this.errorOf(answer, out.method);
  }

  private async auth(metadata: Metadata) {
    const value = metadata.get('x-access-token')[0];
    const token = typeof value === 'string' ? value : value?.toString();
    if (!token)
      throw new DomainError(
        'unauthenticated',
        'unauthenticated',
        'missing or invalid x-access-token',
      );
    const auth = await this.relay.authorize(token, 'grpc');
    if (!auth.ok) {
      if (auth.answer.status === 401)
        throw new DomainError(
          'unauthenticated',
          'unauthenticated',
          'missing or invalid x-access-token',
        );
      if (auth.answer.status === 404)
        throw new DomainError(
          'network_not_offered',
          'forbidden',
          'this access token is not for a network offered over gRPC at this endpoint',
        );
      throw new DomainError(
        'credentials_unavailable',
        'unavailable',
        'access token check unavailable, retry later',
      );
    }
    return auth;
  }

  private async relayCalls(
    auth: {
      ok: true;
      token: Parameters<RelayService['relayInternal']>[0];
      network: Parameters<RelayService['relayInternal']>[1];
    },
    calls: OutCall[],
  ): Promise<CallAnswer[]> {
    const outcome = await this.relay.relayInternal(auth.token, auth.network, calls);
    if (!outcome.ok) {
      if (outcome.reason === 'exhausted')
        throw new DomainError('cu_exhausted', 'payment_required', 'compute units exhausted');
      throw new DomainError('rate_limited', 'rate_limited', 'rate limit exceeded');
    }
    return outcome.answers;
  }

  private errorOf(answer: CallAnswer, method?: string): Error {
    if (answer.kind === 'result')
      return new DomainError('internal', 'internal', 'unexpected answer');
    if (answer.kind === 'gateway_error') {
      return answer.error.code === JSONRPC_ERROR.METHOD_NOT_FOUND ||
        answer.error.message === 'filter not found' ||
        answer.error.code !== -32603
        ? new DomainError('upstream_unavailable', 'unavailable', 'upstream node unavailable')
        : new DomainError('upstream_error', 'internal', 'upstream node trouble');
    }
    if (
      answer.error.code === JSONRPC_ERROR.METHOD_NOT_FOUND ||
      /not (found|supported|available)|does not exist/i.test(answer.error.message)
    ) {
      return new GrpcStatusError(
        GrpcStatus.UNIMPLEMENTED,
        `${method ?? 'this call'} is not answered by the upstream nodes of this network`,
      );
    }
    if (answer.error.code === -32602)
      return new DomainError('invalid_argument', 'invalid', answer.error.message);
    return new DomainError(
      'upstream_error',
      'internal',
      `upstream node error: ${answer.error.message}`,
    );
  }
}
