import { keccak256 } from 'viem';
import type { DomainError } from '@meridian/errors';
import { isFilterMethod, mayCoalesce, NETWORKS, type NetworkKey } from '@meridian/networks';
import {
  JSONRPC_ERROR,
  type JsonRpcErrorObject,
  parseResponse,
  type RpcResponseItem,
  serializeRequest,
} from '@meridian/jsonrpc';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import { FILTER_NOT_FOUND, NODE_TROUBLE, UPSTREAM_UNAVAILABLE } from '../relay/gateway-errors';
import { checkGrowingFilterLogs, growingFloorOf } from '../relay/logs-range';
import { CallCoalescer } from './call-coalescer';
import {
  decodeFilterId,
  encodeFilterId,
  encodeFloorFilterId,
  type FilterIdSeal,
  splitFloor,
} from './filter-id';
import { isAlreadyKnown, mayRetry, type FailureKind } from './send-policy';
import type { Upstream, UpstreamPool } from './upstream-pool';

export interface OutCall {
  readonly method: string;
  readonly params: readonly unknown[];
  /** Params as the client wrote them (relayed unchanged). */
  readonly paramsRaw: string;
}

/**
 * The answer to one relayed call: a node's (its result or its own JSON-RPC error), or the
 * gateway's (`gateway_error`: no node answered). Which are billed: `isBilled`.
 */
export type CallAnswer =
  | { kind: 'result'; resultText: string }
  | { kind: 'node_error'; error: JsonRpcErrorObject; errorRaw?: string }
  | { kind: 'gateway_error'; error: DomainError };

/**
 * Whether a relayed call's answer is billed, the one rule for HTTP, WebSocket and gRPC: a node's
 * result and its own errors are (the node did the work the request asked: a revert, a bad param
 * it found, a block it does not have), except -32601 "method not found": that node does not
 * implement a method this network's table offers (BorBlockReceipt, GetRootHash, GetAuthor's
 * bor_getAuthor on a non-Bor node), the service's gap, not the customer's request (ADR 0203
 * amendment). No node answered: not billed.
 */
export function isBilled(answer: CallAnswer): boolean {
  if (answer.kind === 'result') return true;
  return answer.kind === 'node_error' && answer.error.code !== JSONRPC_ERROR.METHOD_NOT_FOUND;
}

const FILTER_CREATE = new Set([
  'eth_newFilter',
  'eth_newBlockFilter',
  'eth_newPendingTransactionFilter',
]);
const FILTER_USE = new Set(['eth_getFilterChanges', 'eth_getFilterLogs', 'eth_uninstallFilter']);

/**
 * A call on a network with no node here: no node answers it, and no filter of it exists here
 * (filters live in a node of this endpoint), so a filter call is "filter not found", byte for
 * byte what an id no filter has gets, whoever sealed it (QA: another network's filter id, used
 * with a token of a network without nodes, was answered "upstream node unavailable").
 */
function withoutNodes(call: OutCall): DomainError {
  return FILTER_USE.has(call.method) ? FILTER_NOT_FOUND : UPSTREAM_UNAVAILABLE;
}

export interface RouterOptions {
  timeoutMs: number;
  maxAttempts: number;
  /** Most calls per upstream batch of same-turn calls (UPSTREAM_BATCH_MAX); 1 turns it off. */
  batchMax: number;
  /**
   * MAX_LOGS_BLOCK_RANGE: eth_getFilterLogs of a filter whose range grows with the chain is
   * refused once fromBlock..head passes it (ADR 0211). Unset: not checked.
   */
  maxLogsBlockRange?: number;
  /** Binds every filter id to the account, network and endpoint that made it. */
  filterIds: FilterIdSeal;
}

/**
 * Sends calls to a network's upstream pool: picks healthy in-sync nodes, fails over for calls
 * that may be repeated, pins filters to the node that created them (the id says which), turns
 * "already known" answers to a transaction into its hash, and sends the coalescible calls of one
 * event-loop turn as one upstream batch (ADR 0205).
 */
export class UpstreamRouter {
  private readonly coalescers = new Map<NetworkKey, CallCoalescer>();

  constructor(
    private readonly pools: ReadonlyMap<NetworkKey, UpstreamPool>,
    private readonly metrics: GatewayMetrics,
    private readonly options: RouterOptions,
  ) {
    if (options.batchMax > 1)
      for (const [network, pool] of pools)
        this.coalescers.set(
          network,
          new CallCoalescer(
            (calls) => this.exchange(pool, calls, undefined).then(({ answers }) => answers),
            options.batchMax,
            (size) => metrics.observeUpstreamBatch(network, size),
          ),
        );
  }

  pool(network: NetworkKey): UpstreamPool | undefined {
    return this.pools.get(network);
  }

  /**
   * `accountId`: whose calls these are. A filter call is answered only with a filter that
   * account made on this network here; any other id is "filter not found".
   */
  async send(
    network: NetworkKey,
    accountId: string,
    calls: readonly OutCall[],
  ): Promise<CallAnswer[]> {
    const pool = this.pools.get(network);
    if (pool === undefined || pool.upstreams.length === 0)
      return calls.map((call) => ({ kind: 'gateway_error', error: withoutNodes(call) }));
    const answers: CallAnswer[] = new Array(calls.length);
    const plain: number[] = [];
    const work: Promise<void>[] = [];
    calls.forEach((call, i) => {
      if (isFilterMethod(call.method)) {
        work.push(this.sendFilterCall(pool, accountId, call).then((a) => void (answers[i] = a)));
      } else {
        plain.push(i);
      }
    });
    if (plain.length > 0) {
      const group = plain.map((i) => calls[i]!);
      const coalescer = this.coalescers.get(network);
      const details = NETWORKS[network];
      const sent =
        coalescer !== undefined && group.every((call) => mayCoalesce(details, call.method))
          ? coalescer.submit(group)
          : this.exchange(pool, group, undefined).then((exchanged) => exchanged.answers);
      work.push(
        sent.then((groupAnswers) => {
          plain.forEach((i, k) => (answers[i] = groupAnswers[k]!));
        }),
      );
    }
    await Promise.all(work);
    return answers;
  }

  private async sendFilterCall(
    pool: UpstreamPool,
    accountId: string,
    call: OutCall,
  ): Promise<CallAnswer> {
    if (FILTER_CREATE.has(call.method)) {
      const { answers, upstream } = await this.exchange(pool, [call], undefined);
      const answer = answers[0]!;
      if (answer.kind !== 'result' || upstream === undefined) return answer;
      const upstreamId = safeParse(answer.resultText);
      const floor = call.method === 'eth_newFilter' ? growingFloorOf(call.params) : undefined;
      const id =
        typeof upstreamId !== 'string'
          ? undefined
          : floor === undefined
            ? encodeFilterId(upstream.spec.tag, upstreamId)
            : encodeFloorFilterId(upstream.spec.floorTag, floor, upstreamId);
      if (id === undefined) return { kind: 'gateway_error', error: NODE_TROUBLE };
      const sealed = this.options.filterIds.seal(id, pool.network, accountId);
      return { kind: 'result', resultText: JSON.stringify(sealed) };
    }
    if (FILTER_USE.has(call.method)) {
      // Not this account's filter (here, on this network): the answer of an unknown id.
      const opened = this.options.filterIds.open(call.params[0], pool.network, accountId);
      const decoded = opened === undefined ? undefined : decodeFilterId(opened);
      if (decoded === undefined) return { kind: 'gateway_error', error: FILTER_NOT_FOUND };
      let upstream = pool.byTag(decoded.tag);
      let upstreamFilterId = decoded.upstreamFilterId;
      if (upstream === undefined) {
        // A filter whose range grows with the chain: its id carries its fromBlock (ADR 0211).
        upstream = pool.byFloorTag(decoded.tag);
        const floored = upstream && splitFloor(decoded.upstreamFilterId);
        if (upstream === undefined || floored === undefined)
          return { kind: 'gateway_error', error: FILTER_NOT_FOUND };
        upstreamFilterId = floored.upstreamFilterId;
        const cap = this.options.maxLogsBlockRange;
        if (call.method === 'eth_getFilterLogs' && cap !== undefined) {
          const refused = checkGrowingFilterLogs(floored.fromBlock, cap, pool.headHeight);
          if (refused !== null) return { kind: 'gateway_error', error: refused };
        }
      }
      const params = [upstreamFilterId, ...call.params.slice(1)];
      const { answers } = await this.exchange(
        pool,
        [{ method: call.method, params, paramsRaw: JSON.stringify(params) }],
        upstream,
      );
      return answers[0]!;
    }
    return (await this.exchange(pool, [call], undefined)).answers[0]!;
  }

  /**
   * One logical exchange (a single call or an upstream batch), with failover when every call in
   * it may be repeated after the failure seen. `pinned` forces one node (filters).
   */
  private async exchange(
    pool: UpstreamPool,
    calls: readonly OutCall[],
    pinned: Upstream | undefined,
  ): Promise<{ answers: CallAnswer[]; upstream?: Upstream }> {
    const methods = calls.map((c) => c.method);
    const body =
      calls.length === 1
        ? serializeRequest('0', calls[0]!.method, calls[0]!.paramsRaw)
        : `[${calls.map((c, id) => serializeRequest(String(id), c.method, c.paramsRaw)).join(',')}]`;
    const tried = new Set<number>();
    let lastFailure: FailureKind = 'not_sent';
    const attempts = pinned ? 1 : Math.min(this.options.maxAttempts, pool.upstreams.length);
    for (let attempt = 0; attempt < attempts; attempt++) {
      const upstream = pinned ?? pool.pick(tried);
      if (upstream === undefined) break;
      tried.add(upstream.index);
      const label = upstream.label;
      const started = performance.now();
      const outcome = await upstream.post(body, this.options.timeoutMs);
      const seconds = (performance.now() - started) / 1000;
      if (outcome.ok) {
        const answers = parseAnswers(outcome.text, calls.length);
        if (answers !== undefined) {
          upstream.healthy = true;
          this.metrics.countUpstream(pool.network, label, 'ok', seconds);
          return {
            answers: answers.map((a, i) => fixSendAnswer(calls[i]!, a, attempt > 0)),
            upstream,
          };
        }
        lastFailure = 'bad_answer';
      } else {
        lastFailure = outcome.failure;
        upstream.lastError = outcome.reason;
        // A node that cannot be reached leaves rotation until its next good health check.
        if (outcome.failure !== 'bad_answer') upstream.healthy = false;
      }
      this.metrics.countUpstream(pool.network, label, lastFailure, seconds);
      const retryable = methods.every((m) => FILTER_CREATE.has(m))
        ? lastFailure === 'not_sent'
        : mayRetry(methods, lastFailure);
      if (!retryable) break;
    }
    const error = lastFailure === 'bad_answer' ? NODE_TROUBLE : UPSTREAM_UNAVAILABLE;
    return { answers: calls.map(() => ({ kind: 'gateway_error', error })) };
  }
}

export function upstreamLabel(upstream: Pick<Upstream, 'label'>): string {
  return upstream.label;
}

function parseAnswers(text: string, count: number): CallAnswer[] | undefined {
  const parsed = parseResponse(text);
  if (parsed.kind === 'malformed') return undefined;
  if (parsed.kind === 'single') {
    const a = answerOf(parsed.item);
    if (count === 1) return a === undefined ? undefined : [a];
    // A node that refuses a whole batch answers one error object; it applies to every call.
    return a?.kind === 'node_error' ? new Array<CallAnswer>(count).fill(a) : undefined;
  }
  const answers = new Array<CallAnswer>(count).fill({ kind: 'gateway_error', error: NODE_TROUBLE });
  for (const item of parsed.items) {
    const id = item.idRaw === undefined ? NaN : Number(item.idRaw);
    const a = answerOf(item);
    if (Number.isInteger(id) && id >= 0 && id < count && a !== undefined) answers[id] = a;
  }
  return answers;
}

function answerOf(item: RpcResponseItem): CallAnswer | undefined {
  if (item.kind === 'result') return { kind: 'result', resultText: item.resultRaw };
  if (item.kind === 'error')
    return {
      kind: 'node_error',
      error: { code: item.code, message: item.message },
      errorRaw: item.errorRaw,
    };
  return undefined;
}

export function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function fixSendAnswer(call: OutCall, answer: CallAnswer, resent: boolean): CallAnswer {
  if (call.method !== 'eth_sendRawTransaction' || answer.kind !== 'node_error') return answer;
  const raw = call.params[0];
  if (
    typeof raw !== 'string' ||
    !/^0x[0-9a-fA-F]*$/.test(raw) ||
    !isAlreadyKnown(answer.error.message, resent)
  )
    return answer;
  const hash = keccak256(raw as `0x${string}`);
  return { kind: 'result', resultText: JSON.stringify(hash) };
}
