import { status as GrpcStatus, type Metadata } from '@grpc/grpc-js';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { bor } from '@meridian/contracts';
import { DomainError, quoteInput } from '@meridian/errors';
import { JSONRPC_ERROR } from '@meridian/jsonrpc';
import { GrpcStatusError } from '@meridian/platform-grpc';
import {
  NETWORK_NOT_OFFERED_CODE,
  NODE_TROUBLE,
  planRateLimitWords,
  UPSTREAM_UNAVAILABLE,
} from '../relay/gateway-errors';
import type {
  Authorized,
  CallTally,
  InternalCallOptions,
  RelayService,
} from '../relay/relay.service';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import type { LoggedAnswer } from '../observability/request-log';
import type { Network } from '@meridian/networks';
import type { ResolvedToken } from '../credentials/credential-cache';
import {
  afterPendingIo,
  isBilled,
  safeParse,
  type CallAnswer,
  type OutCall,
} from '../upstreams/upstream-router';
import {
  fromH256,
  toBlockTag,
  toH160,
  toHeader,
  toReceipt,
  totalDifficultyOf,
} from './bor-mapping';

const MAX_BATCH_BLOCKS = 100;
/** Longest block-number argument taken: a 0x-hex uint64 with room for spaces, or a tag. */
const MAX_BLOCK_NUMBER_CHARS = 80;

const BLOCK_NOT_FOUND = new DomainError('block_not_found', 'not_found', 'block not found');
const RECEIPT_NOT_FOUND = new DomainError('receipt_not_found', 'not_found', 'receipt not found');
/** COMPAT's wording for every credential failure on this interface, missing or unknown. */
const INVALID_TOKEN = new DomainError(
  'unauthenticated',
  'unauthenticated',
  'missing or invalid x-access-token',
);
const NETWORK_NOT_OFFERED = new DomainError(
  'network_not_offered',
  'forbidden',
  'this access token is not for a network offered over gRPC at this endpoint',
);
const INVALID_RANGE = new DomainError(
  'invalid_range',
  'invalid',
  'endBlockNumber is before startBlockNumber',
);
const RANGE_TOO_LARGE = new DomainError(
  'range_too_large',
  'invalid',
  `at most ${MAX_BATCH_BLOCKS} blocks per batch`,
);
const HASH_REQUIRED = new DomainError('invalid_hash', 'invalid', 'hash is required');
const VOTE_HASH_REQUIRED = new DomainError(
  'invalid_hash',
  'invalid',
  'hash is required: the 0x-hex hash of the end block of the range',
);
const MILESTONE_ID_REQUIRED = new DomainError(
  'invalid_milestone_id',
  'invalid',
  'milestoneId is required',
);
/**
 * A rate refusal of the relay in COMPAT's words for this interface: RESOURCE_EXHAUSTED "rate
 * limit exceeded: " and then HTTP's wording (`planRateLimitWords`; the JSON-RPC answer starts
 * with -32005's words, "limit exceeded: …"). Its details go along: `retryAfterMs` is the
 * `retry-after-ms` trailer (toGrpcStatus), what HTTP says in `Retry-After` and `data`.
 */
const grpcRateLimited = (refusal: DomainError): DomainError =>
  new DomainError(
    refusal.code,
    refusal.kind,
    `rate limit exceeded: ${planRateLimitWords(refusal.details?.['rps'])}`,
    { details: refusal.details },
  );
/** A call its client gave up: what the request log says of it (the client is gone). */
const ABANDONED = new GrpcStatusError(GrpcStatus.CANCELLED, 'cancelled by the client');
const NO_TOTAL_DIFFICULTY = new DomainError(
  'total_difficulty_not_reported',
  'unimplemented',
  'the upstream nodes of this network do not report totalDifficulty',
);

type Out<K extends keyof typeof bor.BorApi.method> = MessageInitShape<
  (typeof bor.BorApi.method)[K]['output']
>;
/** A `common.H256` as decoded: undefined when the request left the field out. */
export type H256Arg = Parameters<typeof fromH256>[0];

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
  /** Each call's usage so far, by its metadata (one object per call): its request log line. */
  private readonly usage = new WeakMap<Metadata, LoggedAnswer & CallTally>();

  constructor(
    private readonly relay: RelayService,
    readonly metrics: GatewayMetrics,
  ) {}

  /**
   * What the call given `metadata` came to, once it ended: its network and account (when its
   * token named them), the JSON-RPC calls it asked for (refused ones too), billed, and their CU.
   */
  usageOf(metadata: Metadata): LoggedAnswer {
    return this.usage.get(metadata) ?? { calls: 0, billedCalls: 0, cu: 0 };
  }

  async headerByNumber(
    number: string,
    metadata: Metadata,
    abandoned?: AbortSignal,
  ): Promise<Out<'headerByNumber'>> {
    const block = await this.block(number, metadata, { abandoned });
    return { header: toHeader(block) };
  }

  async blockByNumber(
    number: string,
    metadata: Metadata,
    abandoned?: AbortSignal,
  ): Promise<Out<'blockByNumber'>> {
    const block = await this.block(number, metadata, { abandoned });
    return { block: { header: toHeader(block) } };
  }

  async transactionReceipt(
    hash: H256Arg,
    metadata: Metadata,
    abandoned?: AbortSignal,
  ): Promise<Out<'transactionReceipt'>> {
    const receipt = await this.one(metadata, call('eth_getTransactionReceipt', [hashOf(hash)]), {
      abandoned,
    });
    if (receipt === null) throw RECEIPT_NOT_FOUND;
    return { receipt: toReceipt(receipt as Record<string, unknown>) };
  }

  async borBlockReceipt(
    hash: H256Arg,
    metadata: Metadata,
    abandoned?: AbortSignal,
  ): Promise<Out<'borBlockReceipt'>> {
    const receipt = await this.one(metadata, call('eth_getBorBlockReceipt', [hashOf(hash)]), {
      abandoned,
    });
    if (receipt === null) throw RECEIPT_NOT_FOUND;
    return { receipt: toReceipt(receipt as Record<string, unknown>) };
  }

  async getRootHash(
    start: bigint,
    end: bigint,
    metadata: Metadata,
    abandoned?: AbortSignal,
  ): Promise<Out<'getRootHash'>> {
    const [from, to] = range(start, end);
    const root = await this.one(metadata, call('bor_getRootHash', [from, to]), { abandoned });
    return { rootHash: String(root) };
  }

  async getVoteOnHash(
    r: { startBlockNumber: bigint; endBlockNumber: bigint; hash: string; milestoneId: string },
    metadata: Metadata,
    abandoned?: AbortSignal,
  ): Promise<Out<'getVoteOnHash'>> {
    const [from, to] = range(r.startBlockNumber, r.endBlockNumber);
    if (!/^0x[0-9a-fA-F]{1,64}$/.test(r.hash)) throw VOTE_HASH_REQUIRED;
    if (r.milestoneId === '') throw MILESTONE_ID_REQUIRED;
    const vote = await this.one(
      metadata,
      call('bor_getVoteOnHash', [from, to, r.hash, r.milestoneId]),
      { abandoned },
    );
    return { response: vote === true };
  }

  async getStartBlockHeimdallSpanID(
    startBlock: bigint,
    metadata: Metadata,
    abandoned?: AbortSignal,
  ): Promise<Out<'getStartBlockHeimdallSpanID'>> {
    const span = await this.one(
      metadata,
      call('bor_getStartBlockHeimdallSpanID', [blockNumber('StartBlock', startBlock)]),
      { abandoned },
    );
    return { StartBlock: startBlock, HeimdallSpanID: BigInt(Number(span) || 0) };
  }

  /**
   * One GetAuthor is billed as one call, and takes one plan-RPS token: bor_getAuthor, or on a
   * non-Bor node (which answers it -32601, unbilled as every node's -32601 is: `isBilled`) the
   * block's miner from eth_getBlockByNumber, sent without a second token (ADR 0203 amendment).
   */
  async getAuthor(
    number: string,
    metadata: Metadata,
    abandoned?: AbortSignal,
  ): Promise<Out<'getAuthor'>> {
    const tag = this.tag(number);
    const auth = await this.auth(metadata);
    const answers = await this.relayInternal(
      metadata,
      auth.token,
      auth.network,
      [call('bor_getAuthor', [tag])],
      { abandoned },
    );
    const author = answers[0]!;
    if (author.kind === 'result') {
      const value = safeParse(author.resultText);
      if (value === null) throw BLOCK_NOT_FOUND;
      return { author: toH160(value) };
    }
    if (author.kind === 'node_error' && !isBilled(author)) {
      // Not a Bor node: the sealer is the block's coinbase.
      // Admitted with the first try, billed as the one call (ADR 0203 amendment).
      const block = await this.block(number, metadata, { admitted: true, abandoned });
      return { author: toH160(block['miner']) };
    }
    throw this.errorOf(author);
  }

  async getTdByHash(
    hash: H256Arg,
    metadata: Metadata,
    abandoned?: AbortSignal,
  ): Promise<Out<'getTdByHash'>> {
    const block = await this.one(metadata, call('eth_getBlockByHash', [hashOf(hash), false]), {
      abandoned,
    });
    if (block === null) throw BLOCK_NOT_FOUND;
    return { totalDifficulty: this.td(block as Record<string, unknown>) };
  }

  async getTdByNumber(
    number: string,
    metadata: Metadata,
    abandoned?: AbortSignal,
  ): Promise<Out<'getTdByNumber'>> {
    const block = await this.block(number, metadata, { abandoned });
    return { totalDifficulty: this.td(block) };
  }

  async getBlockInfoInBatch(
    start: bigint,
    end: bigint,
    metadata: Metadata,
    abandoned?: AbortSignal,
  ): Promise<Out<'getBlockInfoInBatch'>> {
    range(start, end);
    if (end - start + 1n > BigInt(MAX_BATCH_BLOCKS)) throw RANGE_TOO_LARGE;
    const auth = await this.auth(metadata);
    const calls: OutCall[] = [];
    for (let n = start; n <= end; n++)
      calls.push(call('eth_getBlockByNumber', [`0x${n.toString(16)}`, false]));
    const answers = await this.relayInternal(metadata, auth.token, auth.network, calls, {
      abandoned,
    });
    const blocks = answers.map((a) => {
      if (a.kind !== 'result') throw this.errorOf(a);
      const block = safeParse(a.resultText) as Record<string, unknown> | null;
      if (block === null) throw BLOCK_NOT_FOUND;
      return {
        header: toHeader(block),
        totalDifficulty: totalDifficultyOf(block) ?? 0n,
        author: toH160(block['miner']),
      };
    });
    return { blocks };
  }

  private td(block: Record<string, unknown>): bigint {
    const td = totalDifficultyOf(block);
    if (td === undefined) throw NO_TOTAL_DIFFICULTY;
    return td;
  }

  private tag(number: string): string {
    const tag = number.length <= MAX_BLOCK_NUMBER_CHARS ? toBlockTag(number) : undefined;
    if (tag === undefined)
      throw new DomainError(
        'invalid_block_number',
        'invalid',
        `invalid block number ${quoteInput(number)}: decimal or 0x-hex up to 2^64-1, or a tag such as latest`,
      );
    return tag;
  }

  private async block(
    number: string,
    metadata: Metadata,
    options?: InternalCallOptions,
  ): Promise<Record<string, unknown>> {
    const block = await this.one(
      metadata,
      call('eth_getBlockByNumber', [this.tag(number), false]),
      options,
    );
    if (block === null || typeof block !== 'object') throw BLOCK_NOT_FOUND;
    return block as Record<string, unknown>;
  }

  private async one(
    metadata: Metadata,
    out: OutCall,
    options?: InternalCallOptions,
  ): Promise<unknown> {
    const auth = await this.auth(metadata);
    const answer = (
      await this.relayInternal(metadata, auth.token, auth.network, [out], options)
    )[0]!;
    if (answer.kind === 'result') return safeParse(answer.resultText);
    throw this.errorOf(answer, out.method);
  }

  /**
   * The relay's calls, tallied for the call's log line; a rate refusal reworded for gRPC. A call
   * abandoned meanwhile (`options.abandoned`: its client cancelled it) ends here, CANCELLED,
   * whatever its calls' answers: its client is gone, and the calls not sent were not answered.
   */
  private async relayInternal(
    metadata: Metadata,
    token: ResolvedToken,
    network: Network,
    calls: readonly OutCall[],
    options?: InternalCallOptions,
  ): ReturnType<RelayService['relayInternal']> {
    try {
      const answers = await this.relay.relayInternal(
        token,
        network,
        calls,
        options,
        this.tallyOf(metadata, token, network),
      );
      await this.unlessAbandoned(options);
      return answers;
    } catch (error) {
      if (error === ABANDONED) throw error;
      await this.unlessAbandoned(options);
      if (error instanceof DomainError && error.kind === 'rate_limited')
        throw grpcRateLimited(error);
      throw error;
    }
  }

  /**
   * Throws ABANDONED when the call's client cancelled it, read after the I/O pending now (a
   * cancel that arrived while its last answers were handled: `afterPendingIo`). QA: cancelled
   * calls logged 0 (OK), or 8 when refused for the rate, though the cancel came first.
   */
  private async unlessAbandoned(options: InternalCallOptions | undefined): Promise<void> {
    const abandoned = options?.abandoned;
    if (abandoned === undefined) return;
    if (!abandoned.aborted) await afterPendingIo();
    if (abandoned.aborted) throw ABANDONED;
  }

  private async auth(metadata: Metadata): Promise<Authorized> {
    const value = metadata.get('x-access-token')[0];
    const token = typeof value === 'string' ? value : value?.toString();
    if (!token) throw INVALID_TOKEN;
    const auth = await this.relay.authorization(token, 'grpc');
    if (auth.network !== undefined && auth.token !== undefined)
      this.tallyOf(metadata, auth.token, auth.network);
    if (!('refused' in auth)) return auth;
    // The relay's refusal, in COMPAT's words for this interface.
    const refused = auth.refused;
    if (refused.kind === 'unauthenticated') throw INVALID_TOKEN;
    if (refused.code === NETWORK_NOT_OFFERED_CODE) throw NETWORK_NOT_OFFERED;
    throw refused;
  }

  private tallyOf(metadata: Metadata, token: ResolvedToken, network: Network): CallTally {
    let tally = this.usage.get(metadata);
    if (tally === undefined) {
      tally = { network: network.key, account: token.accountId, calls: 0, billedCalls: 0, cu: 0 };
      this.usage.set(metadata, tally);
    }
    return tally;
  }

  /**
   * A call the node did not answer with a result, as a DomainError: the gateway's own (no node
   * answered) as it is; a node's error by its JSON-RPC code. UNIMPLEMENTED is exactly the node
   * error `isBilled` leaves free (-32601: a method the node lacks); a block or receipt the node
   * does not have ("header not found", "… does not exist", any code but -32601) is NOT_FOUND,
   * billed as every node answer is. It matched /not (found|supported|available)/ and answered
   * UNIMPLEMENTED for a billed "header not found" (QA).
   */
  private errorOf(answer: CallAnswer, method?: string): DomainError {
    if (answer.kind === 'result') return NODE_TROUBLE;
    if (answer.kind === 'gateway_error')
      // An answer over MAX_RESPONSE_BYTES: RESOURCE_EXHAUSTED with its message (ADR 0215).
      return answer.error.kind === 'internal' || answer.error.kind === 'too_large'
        ? answer.error
        : UPSTREAM_UNAVAILABLE;
    if (!isBilled(answer))
      return new DomainError(
        'method_not_served',
        'unimplemented',
        `${method ?? 'this call'} is not answered by the upstream nodes of this network`,
      );
    if (/not found|does not exist|unknown block/i.test(answer.error.message))
      return method === 'eth_getTransactionReceipt' || method === 'eth_getBorBlockReceipt'
        ? RECEIPT_NOT_FOUND
        : BLOCK_NOT_FOUND;
    if (answer.error.code === JSONRPC_ERROR.INVALID_PARAMS)
      return new DomainError('invalid_argument', 'invalid', nodeMessage(answer.error.message));
    return new DomainError(
      'upstream_error',
      'internal',
      `upstream node error: ${nodeMessage(answer.error.message)}`,
    );
  }
}

/**
 * A required `common.H256` argument as 0x-hex. A request without the field is INVALID_ARGUMENT
 * (it read as the zero hash and answered NOT_FOUND); an all-zero hash that was sent is a hash.
 */
function hashOf(hash: H256Arg): string {
  if (hash === undefined) throw HASH_REQUIRED;
  return fromH256(hash);
}

/** A uint64 block number the JSON-RPC upstream can take exactly (a JSON number below 2^53). */
function blockNumber(field: string, value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER))
    throw new DomainError(
      'invalid_block_number',
      'invalid',
      `${field} ${value} is beyond the largest block number (${Number.MAX_SAFE_INTEGER})`,
    );
  return Number(value);
}

/** startBlockNumber..endBlockNumber, in order and each a block number. */
function range(start: bigint, end: bigint): [number, number] {
  const from = blockNumber('startBlockNumber', start);
  const to = blockNumber('endBlockNumber', end);
  if (to < from) throw INVALID_RANGE;
  return [from, to];
}

/** A node's error message, cut: it may repeat our (bounded) input, but nodes are not ours. */
function nodeMessage(message: string): string {
  return message.length <= 200 ? message : `${message.slice(0, 200)}…`;
}
