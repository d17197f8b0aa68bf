import { cuForCall } from '@meridian/compute-units';
import type { DomainError } from '@meridian/errors';
import { finalizedHeight, type Network } from '@meridian/networks';
import {
  jsonRpcErrorOf,
  type RpcCall,
  type RpcRequestItem,
  serializeErrorObject,
  serializeSuccess,
} from '@meridian/jsonrpc';
import { cacheKeyOf } from '../cache/cache-policy';
import type { SpendEstimate } from '../credentials/spend-estimate';
import type { OutCall } from '../upstreams/upstream-router';
import { CU_EXHAUSTED } from './gateway-errors';
import { checkCall, type CallCheckOptions, type Transport } from './request-checks';

/** How the plan sorts one call of a request. */
export const SORT = Object.freeze({
  /** Not a JSON-RPC call (the parser's own error answers it). */
  INVALID: 0,
  /**
   * Refused by a check (method table, params, limits), by the account's spend estimate, or
   * after the act (no node answered, the session refused it); not billed.
   */
  REFUSED: 1,
  /** Answered by the gateway itself (eth_chainId, net_version). */
  LOCAL: 2,
  /** Answered from the cache of immutable answers. */
  CACHED: 3,
  /** Sent to a node; its answer is not cacheable. */
  RELAYED: 4,
  /** Sent to a node; its answer goes to the cache when it is immutable (a cache miss). */
  RELAYED_CACHEABLE: 5,
  /** eth_subscribe / eth_unsubscribe, answered by the WebSocket session. */
  SESSION: 6,
});

/** What a plan is made with that does not change between requests (built once). */
export interface PlanRules {
  readonly checks: Readonly<Record<Transport, CallCheckOptions>>;
  readonly cache: { get(key: string): string | undefined };
}

export function planRules(
  maxLogsBlockRange: number,
  cache: { get(key: string): string | undefined },
): PlanRules {
  return {
    checks: {
      http: { transport: 'http', maxLogsBlockRange },
      websocket: { transport: 'websocket', maxLogsBlockRange },
    },
    cache,
  };
}

/**
 * What to do with each call of one request, decided without any I/O: `sorts[i]` says how item i
 * is answered; the calls answered already (invalid, refused, local, cached) have their answer
 * text in `answers[i]` and their metric status in `statuses[i]`; `relayed` lists the calls for
 * the upstream with their item index (`relayedAt`) and cache key; `sessionAt` the calls for the
 * WebSocket session. Parallel arrays rather than an object per call: the relay allocates per
 * request, not per call (ADR 0207).
 */
export interface CallPlan {
  readonly sorts: number[];
  readonly answers: (string | undefined)[];
  readonly statuses: (string | undefined)[];
  readonly relayed: OutCall[];
  readonly relayedAt: number[];
  readonly cacheKeys: (string | undefined)[];
  readonly sessionAt: number[];
  /**
   * The finalized height the plan was made at (below the network's reorg window,
   * `finalizedHeight` of @meridian/networks; undefined while the head is unknown): what a relayed answer is held to before it is cached (`isCacheableResult`).
   */
  readonly finalized: number | undefined;
  /**
   * The account's spend estimate the plan took its billed calls' CU from: a call that turns out
   * unbilled gives its CU back (`giveBack`), one answered is `metered` there.
   */
  readonly spend: SpendEstimate | undefined;
}

const SESSION_METHODS = new Set(['eth_subscribe', 'eth_unsubscribe']);

/**
 * @param head the network's head height, when the pool knows it (log ranges, what is final)
 * @param sessionMethods whether a WebSocket session answers eth_subscribe / eth_unsubscribe
 * @param spend the account's spend estimate: every call the checks pass (each is billed) takes
 *   its CU from it in request order, and one the estimate no longer covers is refused `unpaid`
 *   (a batch: the calls that do not fit, each answered as the exhausted path answers)
 */
export function planCalls(
  network: Network,
  items: readonly RpcRequestItem[],
  rules: PlanRules,
  transport: Transport,
  head: number | undefined,
  sessionMethods: boolean,
  spend?: SpendEstimate,
  unpaid: DomainError = CU_EXHAUSTED,
): CallPlan {
  const count = items.length;
  const checks = rules.checks[transport];
  const finalized = finalizedHeight(network.key, head);
  const plan: CallPlan = {
    sorts: new Array<number>(count),
    answers: new Array<string | undefined>(count),
    statuses: new Array<string | undefined>(count),
    relayed: [],
    relayedAt: [],
    cacheKeys: [],
    sessionAt: [],
    finalized,
    spend,
  };
  for (let i = 0; i < count; i++) {
    const item = items[i]!;
    if (!item.valid) {
      plan.sorts[i] = SORT.INVALID;
      if (item.idRaw !== undefined) plan.answers[i] = serializeErrorObject(item.idRaw, item.error);
      plan.statuses[i] = String(item.error.code);
      continue;
    }
    const idRaw = item.idRaw ?? 'null';
    const refused = checkCall(network, item, checks, head);
    if (refused !== null) {
      plan.sorts[i] = SORT.REFUSED;
      const error = jsonRpcErrorOf(refused);
      plan.answers[i] = serializeErrorObject(idRaw, error);
      plan.statuses[i] = String(error.code);
      continue;
    }
    if (spend !== undefined && !spend.take(cuForCall(network, item.method))) {
      plan.sorts[i] = SORT.REFUSED;
      const error = jsonRpcErrorOf(unpaid);
      plan.answers[i] = serializeErrorObject(idRaw, error);
      plan.statuses[i] = String(error.code);
      continue;
    }
    const local = localAnswer(network, item.method);
    if (local !== undefined) {
      plan.sorts[i] = SORT.LOCAL;
      plan.answers[i] = serializeSuccess(idRaw, local);
      plan.statuses[i] = 'ok';
      continue;
    }
    if (sessionMethods && SESSION_METHODS.has(item.method)) {
      plan.sorts[i] = SORT.SESSION;
      plan.sessionAt.push(i);
      continue;
    }
    const key = cacheKeyOf(network.key, item.method, item.params, finalized);
    if (key !== undefined) {
      const hit = rules.cache.get(key);
      if (hit !== undefined) {
        plan.sorts[i] = SORT.CACHED;
        plan.answers[i] = serializeSuccess(idRaw, hit);
        plan.statuses[i] = 'ok';
        continue;
      }
    }
    plan.sorts[i] = key === undefined ? SORT.RELAYED : SORT.RELAYED_CACHEABLE;
    plan.relayedAt.push(i);
    plan.relayed.push(outCall(item));
    plan.cacheKeys.push(key);
  }
  return plan;
}

function outCall(call: RpcCall): OutCall {
  return { method: call.method, params: call.params, paramsRaw: call.paramsRaw };
}

function localAnswer(network: Network, method: string): string | undefined {
  if (method === 'eth_chainId' && network.chainIdHex !== null) return `"${network.chainIdHex}"`;
  if (method === 'net_version' && network.netVersion !== null) return `"${network.netVersion}"`;
  return undefined;
}
