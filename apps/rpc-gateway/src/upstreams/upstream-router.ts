import type { Logger } from 'pino';
import { keccak256 } from 'viem';
import type { DomainError } from '@meridian/errors';
import { isFilterMethod, mayCoalesce, NETWORKS, type NetworkKey } from '@meridian/networks';
import {
  type JsonRpcErrorObject,
  nodeLacksMethod,
  parseResponse,
  type RpcResponseItem,
  serializeRequest,
} from '@meridian/jsonrpc';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import {
  answersBusy,
  answerTooLarge,
  CALL_ABANDONED,
  FILTER_NOT_FOUND,
  NODE_TROUBLE,
  UPSTREAM_UNAVAILABLE,
} from '../relay/gateway-errors';
import { checkGrowingFilterLogs, growingFloorOf } from '../relay/logs-range';
import { AnswerBudget, type AnswersInFlight } from './answer-budget';
import { CallCoalescer } from './call-coalescer';
import {
  decodeFilterId,
  encodeFilterId,
  encodeFloorFilterId,
  FILTER_ID_METHODS,
  type FilterIdSeal,
  splitFloor,
} from './filter-id';
import {
  isAlreadyKnown,
  isMissingDataError,
  isNodeThrottled,
  mayRetry,
  type FailureKind,
} from './send-policy';
import { headAnswer, heightShown, isMissingBlock } from './heights';
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
 * it found, a block it does not have), except the node's "I do not implement this method"
 * (`nodeLacksMethod` of @meridian/jsonrpc: -32601, -32004, or anvil's -32603 "Not implemented"
 * for eth_getWork): that node does not implement a method this network's table offers
 * (BorBlockReceipt, GetRootHash, GetAuthor's bor_getAuthor on a non-Bor node, eth_getWork on
 * anvil), the service's gap, not the customer's request (ADR 0203 amendment; QA: eth_getWork
 * was billed 20 CU). No node answered: not billed.
 */
export function isBilled(answer: CallAnswer): boolean {
  if (answer.kind === 'result') return true;
  return answer.kind === 'node_error' && !nodeLacksMethod(answer.error);
}

const FILTER_CREATE = new Set([
  'eth_newFilter',
  'eth_newBlockFilter',
  'eth_newPendingTransactionFilter',
]);
const FILTER_USE = FILTER_ID_METHODS;

/**
 * The answer to a filter id no filter of this account has here (unknown, another account's,
 * another network's or endpoint's, or a network with no node here): what a node answers an id it
 * does not have, byte for byte, before any node is asked. eth_getFilterChanges and
 * eth_getFilterLogs: -32000 "filter not found"; eth_uninstallFilter: `false` (go-ethereum and
 * anvil: nothing was uninstalled), a result, billed as the node's `false` for a filter it dropped
 * is, and as eth_unsubscribe of an id the session does not hold (QA: -32000 for a foreign id
 * beside `false` for an already-removed one told the two apart).
 */
const UNINSTALLED_NOTHING: CallAnswer = { kind: 'result', resultText: 'false' };
const NO_SUCH_FILTER: CallAnswer = { kind: 'gateway_error', error: FILTER_NOT_FOUND };
function unknownFilter(method: string): CallAnswer {
  return method === 'eth_uninstallFilter' ? UNINSTALLED_NOTHING : NO_SUCH_FILTER;
}

/**
 * A call on a network with no node here: no node answers it, and no filter of it exists here
 * (filters live in a node of this endpoint), so a filter call is answered as an unknown id
 * (`unknownFilter`), whoever sealed it (QA: another network's filter id, used with a token of a
 * network without nodes, was answered "upstream node unavailable").
 */
function withoutNodes(call: OutCall): CallAnswer {
  return FILTER_USE.has(call.method)
    ? unknownFilter(call.method)
    : { kind: 'gateway_error', error: UPSTREAM_UNAVAILABLE };
}

/**
 * An abandonable request's calls (a gRPC method's: GetBlockInfoInBatch makes up to 100) go in
 * slices of this many, SLICES_IN_FLIGHT at a time, so a cancel stops the ones not yet sent
 * (`sendUnlessAbandoned`). 20: the default UPSTREAM_BATCH_MAX, an upstream batch the gateway
 * already sends; two in flight keep the node busy while a slice's answer travels back.
 */
export const ABANDONABLE_SLICE = 20;
export const SLICES_IN_FLIGHT = 2;

/**
 * Resolves once the event loop has polled for I/O again. A client's cancel (grpc-js 'cancelled',
 * which aborts the call's signal) is read off its connection, which happens only between runs of
 * callbacks: a fast node's answer, the next slice and the method's answer follow each other in one
 * run, so a cancel that arrived meanwhile was read only after everything had been sent and
 * answered (QA: anvil answered 100 blocks in ~6 ms and every cancelled call logged 0 with 100
 * billed). The second immediate runs after a poll phase that began after this call (the first
 * runs after the current one, which may have started before the cancel arrived).
 */
export function afterPendingIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

export interface RouterOptions {
  timeoutMs: number;
  maxAttempts: number;
  /** Most calls per upstream batch of same-turn calls (UPSTREAM_BATCH_MAX); 1 turns it off. */
  batchMax: number;
  /**
   * MAX_RESPONSE_BYTES: the most bytes of node answers one client request receives, and the
   * most of one node body read (ADR 0215). Past it: -32005 under the call's id, unbilled.
   */
  maxResponseBytes: number;
  /**
   * The worker's budget of answer bytes in flight (MAX_ANSWER_BYTES_IN_FLIGHT, ADR 0215
   * amendment): each node body read holds on it; one it cannot hold is -32005 "server busy".
   * Unset: not bounded.
   */
  answersInFlight?: AnswersInFlight;
  /**
   * MAX_LOGS_BLOCK_RANGE: eth_getFilterLogs of a filter whose range grows with the chain is
   * refused once fromBlock..head passes it (ADR 0211). Unset: not checked.
   */
  maxLogsBlockRange?: number;
  /** Binds every filter id to the account, network and endpoint that made it. */
  filterIds: FilterIdSeal;
  /** Hears each change of a node's breaker: one line per change, not per call. */
  logger?: Pick<Logger, 'warn' | 'info'>;
}

/**
 * Sends calls to a network's upstream pool: picks healthy in-sync nodes, fails over for calls
 * that may be repeated, pins filters to the node that created them (the id says which), turns
 * "already known" answers to a transaction into its hash, and sends the coalescible calls of one
 * event-loop turn as one upstream batch (ADR 0205).
 */
export class UpstreamRouter {
  private readonly coalescers = new Map<NetworkKey, CallCoalescer>();
  /** The answer of a call whose node answer passed what its request may receive. */
  private readonly tooLarge: CallAnswer;
  /** The answer of a call whose node answer the worker's budget in flight could not hold. */
  private readonly busy: CallAnswer | undefined;
  /** The answer of a call not sent: its request was abandoned first. */
  private readonly abandoned: CallAnswer = { kind: 'gateway_error', error: CALL_ABANDONED };

  constructor(
    private readonly pools: ReadonlyMap<NetworkKey, UpstreamPool>,
    private readonly metrics: GatewayMetrics,
    private readonly options: RouterOptions,
  ) {
    this.tooLarge = { kind: 'gateway_error', error: answerTooLarge(options.maxResponseBytes) };
    const inFlight = options.answersInFlight;
    if (inFlight !== undefined) {
      this.busy = { kind: 'gateway_error', error: answersBusy(inFlight.limit) };
      metrics.watchAnswersInFlight(() => inFlight.bytes);
    }
    for (const pool of pools.values()) watchBreakers(pool, metrics, options.logger);
    if (options.batchMax > 1)
      for (const [network, pool] of pools)
        this.coalescers.set(
          network,
          new CallCoalescer(
            (calls, budgets) =>
              this.exchange(pool, calls, undefined, budgets).then(({ answers }) => answers),
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
   * account made on this network here; any other id is "filter not found". `budget`: what the
   * client request's answers may add up to (one per HTTP/WebSocket request or gRPC method;
   * MAX_RESPONSE_BYTES when not given, ADR 0215). `abandoned`: the client request may be given
   * up meanwhile (a gRPC call its client cancels): see `sendUnlessAbandoned`.
   */
  async send(
    network: NetworkKey,
    accountId: string,
    calls: readonly OutCall[],
    budget?: AnswerBudget,
    abandoned?: AbortSignal,
  ): Promise<CallAnswer[]> {
    if (budget !== undefined)
      return this.sendUnlessAbandoned(network, accountId, calls, budget, abandoned);
    // No request to hold the answers until they are written: given back when they are returned.
    const own = new AnswerBudget(this.options.maxResponseBytes, this.options.answersInFlight);
    try {
      return await this.sendUnlessAbandoned(network, accountId, calls, own, abandoned);
    } finally {
      own.release();
    }
  }

  /**
   * Calls of a request that may be abandoned (ADR 0203 amendment "a cancelled gRPC call"): more
   * than ABANDONABLE_SLICE go in slices of that many, at most SLICES_IN_FLIGHT at a time, and
   * once `abandoned` aborts the slices not yet sent are not: each of their calls is answered
   * CALL_ABANDONED (no node answered: unbilled). The signal is read before each slice after the
   * I/O pending since the slice before (`afterPendingIo`), not in the same run of callbacks. A slice already sent is not cut off: its node
   * does the work, answers, and those calls are billed (the rule of `isBilled`), as WebSocket's
   * calls sent before their connection closed are. Without `abandoned` (HTTP, WebSocket), calls
   * go as before: a request's calls in one exchange.
   */
  private async sendUnlessAbandoned(
    network: NetworkKey,
    accountId: string,
    calls: readonly OutCall[],
    budget: AnswerBudget,
    abandoned: AbortSignal | undefined,
  ): Promise<CallAnswer[]> {
    if (abandoned === undefined) return this.sendWithin(network, accountId, calls, budget);
    const answers: CallAnswer[] = new Array(calls.length);
    let next = 0;
    const lane = async (): Promise<void> => {
      for (let answered = false; next < calls.length; answered = true) {
        const start = next;
        const end = Math.min(calls.length, start + ABANDONABLE_SLICE);
        next = end;
        // Read what arrived while this lane's slice before was answered (a cancel among it).
        if (answered) await afterPendingIo();
        const sent = abandoned.aborted
          ? undefined
          : await this.sendWithin(network, accountId, calls.slice(start, end), budget);
        for (let i = start; i < end; i++) answers[i] = sent?.[i - start] ?? this.abandoned;
      }
    };
    await (calls.length <= ABANDONABLE_SLICE
      ? lane()
      : Promise.all(Array.from({ length: SLICES_IN_FLIGHT }, lane)));
    return answers;
  }

  private async sendWithin(
    network: NetworkKey,
    accountId: string,
    calls: readonly OutCall[],
    budget: AnswerBudget,
  ): Promise<CallAnswer[]> {
    const pool = this.pools.get(network);
    if (pool === undefined || pool.upstreams.length === 0) return calls.map(withoutNodes);
    const answers: CallAnswer[] = new Array(calls.length);
    const plain: number[] = [];
    const work: Promise<void>[] = [];
    calls.forEach((call, i) => {
      if (isFilterMethod(call.method)) {
        work.push(
          this.sendFilterCall(pool, accountId, call, budget).then((a) => void (answers[i] = a)),
        );
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
          ? coalescer.submit(group, budget)
          : this.exchange(
              pool,
              group,
              undefined,
              group.map(() => budget),
            ).then((exchanged) => exchanged.answers);
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
    budget: AnswerBudget,
  ): Promise<CallAnswer> {
    const budgets = [budget];
    if (FILTER_CREATE.has(call.method)) {
      const { answers, upstream } = await this.exchange(pool, [call], undefined, budgets);
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
      if (decoded === undefined) return unknownFilter(call.method);
      let upstream = pool.byTag(decoded.tag);
      let upstreamFilterId = decoded.upstreamFilterId;
      if (upstream === undefined) {
        // A filter whose range grows with the chain: its id carries its fromBlock (ADR 0211).
        upstream = pool.byFloorTag(decoded.tag);
        const floored = upstream && splitFloor(decoded.upstreamFilterId);
        if (upstream === undefined || floored === undefined) return unknownFilter(call.method);
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
        budgets,
      );
      return answers[0]!;
    }
    return (await this.exchange(pool, [call], undefined, budgets)).answers[0]!;
  }

  /**
   * One logical exchange (a single call or an upstream batch) with failover (ADR 0202
   * amendment): each attempt sends the calls still unanswered to a node its breaker lets
   * through, preferring nodes at the pool's best height. A node's answer that is not the calls'
   * (transport failure, HTTP 5xx or 429, not JSON-RPC, another id, a batch answered by one
   * object) or its throttling counts against its breaker; a call it lacks the data for
   * (`missingData`) goes on to another node. A batch the node refused unread (an error under
   * id null) is an answer: its unanswered calls are sent again, each alone. A call moves on only when `mayRetry` allows it
   * after what happened. `pinned` forces one node (filters).
   *
   * `budgets`: per call, what its client request may still receive (ADR 0215). A node body is
   * read up to what the request has left (MAX_RESPONSE_BYTES for calls of several requests);
   * past it the read stops, which is no failure of the node (breaker, failover): a single call
   * is answered -32005; the calls of a batch are sent again alone, one after another, so each
   * gets its own answer or -32005. Each answer kept is charged to its request; one that does
   * not fit in what is left is -32005 too (the batch rule).
   */
  private async exchange(
    pool: UpstreamPool,
    calls: readonly OutCall[],
    pinned: Upstream | undefined,
    budgets: readonly AnswerBudget[],
  ): Promise<{ answers: CallAnswer[]; upstream?: Upstream }> {
    const answers: (CallAnswer | undefined)[] = new Array(calls.length);
    /** Per call: what its last attempt ended in, and the node's answer when it lacked the data. */
    const lastFailure: FailureKind[] = new Array(calls.length).fill('not_sent');
    const lacking: (CallAnswer | undefined)[] = new Array(calls.length);
    /** Per call: every node asked said it lacks the data (the answer relayed then). */
    const allLacked: boolean[] = new Array(calls.length).fill(true);
    let pending = calls.map((_, i) => i);
    let answeredBy: Upstream | undefined;
    const tried = new Set<number>();
    /** Calls of a batch the node refused unread (`parseAnswers`): sent again, each alone. */
    const alone: number[] = [];
    /** Calls of a batch whose answer passed the read limit: sent again alone, in turn. */
    const oversize: number[] = [];
    const attempts = pinned ? 1 : Math.min(this.options.maxAttempts, pool.upstreams.length);
    for (let attempt = 0; attempt < attempts && pending.length > 0; attempt++) {
      const admitted = pinned ? pool.admit(pinned) : pool.attempt(tried);
      if (admitted === undefined) break;
      const { upstream } = admitted;
      tried.add(upstream.index);
      const started = performance.now();
      // The body's hold on the worker's budget in flight: given back once its answers are kept
      // (each then held by its request, `AnswerBudget.keep`) or the read failed.
      const read = budgets[pending[0]!]!.read();
      try {
        const outcome = await upstream.post(
          bodyOf(calls, pending),
          this.options.timeoutMs,
          this.readLimit(pending, budgets),
          read,
        );
        const seconds = (performance.now() - started) / 1000;
        if (!outcome.ok && outcome.failure === 'busy') {
          // Not the node's fault: no breaker count, no failover; every call of the body refused.
          pool.settle(admitted, true);
          this.metrics.countUpstream(pool.network, upstream.label, 'busy', seconds);
          this.metrics.countAnswerRefused();
          for (const i of pending) answers[i] = this.busy!;
          pending = [];
          break;
        }
        if (!outcome.ok && outcome.failure === 'too_large') {
          // The node answered: another would answer the same. No breaker count, no failover.
          pool.settle(admitted, true);
          this.metrics.countUpstream(pool.network, upstream.label, 'too_large', seconds);
          if (pending.length === 1) answers[pending[0]!] = this.tooLarge;
          else for (const i of pending) oversize.push(i);
          pending = [];
          break;
        }
        const parsed = outcome.ok ? parseAnswers(outcome.text, pending) : undefined;
        let nodeFailure: FailureKind | undefined = outcome.ok
          ? parsed === undefined
            ? 'bad_answer'
            : undefined
          : outcome.failure;
        let lackedAny = false;
        const next: number[] = [];
        pending.forEach((i, k) => {
          const call = calls[i]!;
          let failure = nodeFailure;
          if (parsed !== undefined) {
            const given = parsed.answers[k];
            if (given === undefined) {
              alone.push(i);
              return;
            }
            const answer = this.judge(pool, upstream, call, given);
            if (answer.verdict === 'ok') {
              const kept = fixSendAnswer(call, answer.answer, attempt > 0);
              answers[i] = budgets[i]!.keep(sizeOf(kept)) ? kept : this.tooLarge;
              if (i === 0) answeredBy = upstream;
              return;
            }
            failure = answer.verdict;
            if (failure === 'throttled') nodeFailure = 'throttled';
            else {
              lackedAny = true;
              lacking[i] = answer.answer;
            }
          }
          lastFailure[i] = failure!;
          if (failure !== 'missing_data') allLacked[i] = false;
          const retryable = FILTER_CREATE.has(call.method)
            ? failure === 'not_sent'
            : mayRetry([call.method], failure!);
          if (retryable) next.push(i);
        });
        pending = next;
        pool.settle(admitted, nodeFailure === undefined, outcome.ok ? nodeFailure : outcome.reason);
        if (!outcome.ok) {
          upstream.lastError = outcome.reason;
          // A node that cannot be reached leaves rotation until its next good health check.
          if (outcome.failure === 'not_sent' || outcome.failure === 'ambiguous')
            upstream.healthy = false;
        }
        // A node's answer is `ok` only when it answered what was asked: one that lacked data, or
        // refused a request unread (error under id null), says so (ADR 0202 amendment).
        this.metrics.countUpstream(
          pool.network,
          upstream.label,
          nodeFailure ?? (lackedAny ? 'missing_data' : parsed?.refused ? 'refused' : 'ok'),
          seconds,
        );
      } finally {
        read?.release();
      }
    }
    await Promise.all(
      alone.map(async (i) => {
        answers[i] = (await this.exchange(pool, [calls[i]!], undefined, [budgets[i]!])).answers[0]!;
      }),
    );
    // One after another: at most one answer at the limit is read at a time.
    for (const i of oversize)
      answers[i] = (await this.exchange(pool, [calls[i]!], pinned, [budgets[i]!])).answers[0]!;
    for (let i = 0; i < calls.length; i++) {
      if (answers[i] !== undefined) continue;
      const failure = lastFailure[i]!;
      // Every node asked lacked the data: the last one's answer is the answer (isBilled).
      if (allLacked[i] && lacking[i] !== undefined) answers[i] = lacking[i];
      else
        answers[i] = {
          kind: 'gateway_error',
          error: failure === 'bad_answer' ? NODE_TROUBLE : UPSTREAM_UNAVAILABLE,
        };
    }
    return { answers: answers as CallAnswer[], upstream: answeredBy };
  }

  /**
   * How much of a node body is read: what the calls' request has left, or MAX_RESPONSE_BYTES
   * when they are calls of several requests (a coalesced batch); at least 1 byte, so a request
   * with nothing left still hears -32005 for its call.
   */
  private readLimit(pending: readonly number[], budgets: readonly AnswerBudget[]): number {
    const first = budgets[pending[0]!]!;
    for (const i of pending) if (budgets[i] !== first) return this.options.maxResponseBytes;
    return Math.max(1, Math.min(first.left, this.options.maxResponseBytes));
  }

  /**
   * A node's answer to one call: the answer (`ok`), the node throttled (`throttled`), or the
   * node lacks what another has (`missing_data`): see `missingData`. Heights it shows raise
   * what the pool knows of it; eth_blockNumber below the pool's head answers the head.
   */
  private judge(
    pool: UpstreamPool,
    upstream: Upstream,
    call: OutCall,
    answer: CallAnswer,
  ): { verdict: 'ok' | 'throttled' | 'missing_data'; answer: CallAnswer } {
    if (answer.kind === 'node_error') {
      const { code, message } = answer.error;
      if (isNodeThrottled(code, message)) return { verdict: 'throttled', answer };
      if (isMissingDataError(code, message, call.method, NETWORKS[pool.network].methods))
        return { verdict: 'missing_data', answer };
      return { verdict: 'ok', answer };
    }
    if (answer.kind !== 'result') return { verdict: 'ok', answer };
    const head = pool.headHeight;
    const seen = heightShown(call, answer.resultText);
    if (seen !== undefined) {
      upstream.showedHeight(seen.height);
      if (head !== undefined && seen.height < head) {
        // Never a head below the one the pool knows (eRPC's enforceHighestBlock): the number is
        // raised; a 'latest' block from a lagging node is asked of another node.
        if (seen.kind === 'number')
          return { verdict: 'ok', answer: { kind: 'result', resultText: headAnswer(call, head) } };
        return { verdict: 'missing_data', answer };
      }
    }
    if (head !== undefined && isMissingBlock(call, answer.resultText, head))
      return { verdict: 'missing_data', answer };
    return { verdict: 'ok', answer };
  }
}

/**
 * Each change of a pool's breakers: the gauge (0 closed, 1 open: a trial due or in flight
 * after its cooldown shows as 1 too) and one log line (warn when it opens, info when it closes).
 */
export function watchBreakers(
  pool: UpstreamPool,
  metrics: GatewayMetrics,
  logger: Pick<Logger, 'warn' | 'info'> | undefined,
): void {
  for (const u of pool.upstreams)
    metrics.upstreamBreakerOpen.set({ network: pool.network, upstream: u.label }, 0);
  pool.onBreakerChange((upstream, change, { reason, cooldownMs }) => {
    const labels = { network: pool.network, upstream: upstream.label };
    metrics.upstreamBreakerOpen.set(labels, change === 'closed' ? 0 : 1);
    if (change === 'closed')
      logger?.info(
        { network: pool.network, upstream: upstream.label, reason },
        reason === undefined
          ? 'upstream breaker closed: its trial was answered'
          : `upstream breaker closed: ${reason}`,
      );
    else
      logger?.warn(
        { network: pool.network, upstream: upstream.label, reason, cooldownMs },
        change === 'opened'
          ? 'upstream breaker opened: no call goes to it until a trial after the cooldown'
          : 'upstream breaker reopened: its trial failed',
      );
  });
}

export function upstreamLabel(upstream: Pick<Upstream, 'label'>): string {
  return upstream.label;
}

/** What an answer adds to its request's answer (its JSON text; ASCII, a byte a character). */
function sizeOf(answer: CallAnswer): number {
  if (answer.kind === 'result') return answer.resultText.length;
  if (answer.kind === 'node_error') return answer.errorRaw?.length ?? 0;
  return 0;
}

/** The body of an attempt: the pending calls, each under its index as id. */
function bodyOf(calls: readonly OutCall[], pending: readonly number[]): string {
  if (pending.length === 1) {
    const call = calls[pending[0]!]!;
    return serializeRequest(String(pending[0]), call.method, call.paramsRaw);
  }
  return `[${pending
    .map((i) => serializeRequest(String(i), calls[i]!.method, calls[i]!.paramsRaw))
    .join(',')}]`;
}

/** A node's answers to the calls sent (`parseAnswers`), and whether it refused any unread. */
interface NodeAnswers {
  answers: (CallAnswer | undefined)[];
  refused: boolean;
}

/**
 * The answers to the calls of `pending` (ids: their indexes), in that order; undefined when
 * the body is not their answer: not JSON-RPC, a single call answered by a batch or under
 * another id, a batch answered by one object other than a refusal or with an id missing,
 * repeated or unknown (QA: copied to every call, or relayed under the client's id, and billed).
 *
 * An error object under id null is the node refusing a request it could not read (JSON-RPC
 * 2.0, section 5; QA: anvil's -32600 for params nested past 128 levels): answering a single
 * call, it is that call's node error; in a batch (the whole batch refused by one such object,
 * or elements of it), the calls it leaves without an answer are `undefined` here: sent again
 * alone, each to get its own answer. Either way the node answered, and `refused` says it
 * refused something.
 */
function parseAnswers(text: string, pending: readonly number[]): NodeAnswers | undefined {
  const parsed = parseResponse(text);
  if (parsed.kind === 'malformed') return undefined;
  if (pending.length === 1) {
    if (parsed.kind !== 'single') return undefined;
    const refused = isRefusal(parsed.item);
    if (idOf(parsed.item) !== pending[0] && !refused) return undefined;
    const a = answerOf(parsed.item);
    return a === undefined ? undefined : { answers: [a], refused };
  }
  if (parsed.kind === 'single')
    return isRefusal(parsed.item)
      ? { answers: new Array<undefined>(pending.length).fill(undefined), refused: true }
      : undefined;
  if (parsed.items.length !== pending.length) return undefined;
  const slot = new Map<number, number>();
  pending.forEach((i, k) => slot.set(i, k));
  const answers = new Array<CallAnswer | undefined>(pending.length);
  let refused = false;
  for (const item of parsed.items) {
    if (isRefusal(item)) {
      refused = true;
      continue;
    }
    const k = slot.get(idOf(item));
    const a = answerOf(item);
    if (k === undefined || answers[k] !== undefined || a === undefined) return undefined;
    answers[k] = a;
  }
  return { answers, refused };
}

/** A JSON-RPC error under id null: the node could not read the request it answers. */
function isRefusal(item: RpcResponseItem): boolean {
  return item.kind === 'error' && item.idRaw === 'null';
}

function idOf(item: RpcResponseItem): number {
  return item.idRaw === undefined ? NaN : Number(item.idRaw);
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
