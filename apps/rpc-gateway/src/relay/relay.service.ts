import { cuForCall } from '@meridian/compute-units';
import type { DomainError } from '@meridian/errors';
import { isOffered, NETWORKS, networksAt, type Endpoint, type Network } from '@meridian/networks';
import { PLANS } from '@meridian/plans';
import {
  callsAsParsed,
  jsonRpcErrorOf,
  namesAnyOf,
  parseRequest,
  type ParsedRequest,
  type RpcCall,
  type RpcRequestItem,
  serializeBatch,
  serializeErrorObject,
  serializeErrorRaw,
  serializeRefusal,
  serializeSuccess,
} from '@meridian/jsonrpc';
import { isCacheableResult } from '../cache/cache-policy';
import type { LruCache } from '../cache/lru-cache';
import type { ResolvedToken } from '../credentials/credential-cache';
import type { SpendEstimate } from '../credentials/spend-estimate';
import type { CredentialService } from '../credentials/credential.service';
import type { RateLimit } from '../limits/token-bucket';
import type { UsageMeter } from '../metering/usage-meter';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import type { LoggedAnswer } from '../observability/request-log';
import type { CallAnswer, OutCall, UpstreamRouter } from '../upstreams/upstream-router';
import { isBilled, safeParse } from '../upstreams/upstream-router';
import { AnswerBudget, type AnswersInFlight } from '../upstreams/answer-budget';
import { planCalls, planRules, SORT, type CallPlan, type PlanRules } from './call-plan';
import {
  balanceRefusal,
  CALL_ABANDONED,
  CREDENTIALS_UNAVAILABLE,
  type Interface,
  networkNotOffered,
  rateLimited,
  UNKNOWN_ACCESS_TOKEN,
  unpaidRefusal,
  type WholeCu,
} from './gateway-errors';
import type { Transport } from './request-checks';

/**
 * The relay's answer to one request. `refused` is a request-level refusal (credentials, network
 * not offered, balance, rate limit) whose status (HTTP) the edge maps, and `body` its JSON-RPC
 * answer under the request's ids (`refusal`); otherwise `body` is the JSON-RPC answer ('' when
 * only notifications were sent). `deprecated`: a call names a method the spec deprecates.
 * `calls`: the calls the request holds as parsed (`callsAsParsed`), whatever their fate; `billedCalls`
 * and `cu`: the calls metered and their compute units (0 for a refusal). The request log's
 * fields (README "Request log").
 */
export interface RelayAnswer {
  refused: DomainError | undefined;
  body: string;
  network: string | undefined;
  account: string | undefined;
  calls: number;
  billedCalls: number;
  cu: number;
  deprecated: boolean;
}

/**
 * What one gRPC method's calls came to, added up by `relayInternal` across its tries: calls
 * asked of the relay (refused ones too), calls metered, their CU. The gRPC request log line.
 */
export interface CallTally {
  calls: number;
  billedCalls: number;
  cu: number;
}

/** A refused authorization, with the token's account and network when it was found. */
export interface RefusedAuthorization {
  refused: DomainError;
  network: Network | undefined;
  token: ResolvedToken | undefined;
}

export interface RelayOptions {
  endpoint: Endpoint;
  maxBatch: number;
  maxLogsBlockRange: number;
  /**
   * MAX_RESPONSE_BYTES: the node answers of one request (an HTTP or WebSocket request, a batch
   * whole; a gRPC method) add up to at most this; calls past it are -32005 (ADR 0215).
   */
  maxResponseBytes: number;
  /**
   * The worker's budget of answer bytes in flight (MAX_ANSWER_BYTES_IN_FLIGHT, ADR 0215
   * amendment): a request's answers past 1 MiB are held on it until its answer is built.
   */
  answersInFlight?: AnswersInFlight;
}

export interface Authorized {
  token: ResolvedToken;
  network: Network;
}

/**
 * How `relayInternal` treats a gRPC method's calls: those it makes beyond its first (one
 * customer call is billed as the one call the CU table prices, ADR 0203 amendment), and those of
 * a method its client gave up.
 */
export interface InternalCallOptions {
  /**
   * The gRPC call already took its plan-RPS token and passed the balance check (an earlier
   * relayInternal of the same call): a second try takes no second token.
   */
  readonly admitted?: boolean;
  /**
   * The gRPC call was given up (its client cancelled it, its deadline passed: ADR 0203
   * amendment). Aborted before the calls are admitted: none is sent, none takes a token, none
   * is billed. Aborted later: the calls not yet sent are not (`UpstreamRouter.send`), those a
   * node answered are billed. Either way the calls not sent are answered CALL_ABANDONED.
   */
  readonly abandoned?: AbortSignal;
}

/** A WebSocket connection answers eth_subscribe/eth_unsubscribe itself. */
export type SessionMethodHandler = (
  call: RpcCall,
) => Promise<{ result: unknown } | { error: DomainError }>;

/**
 * The JSON-RPC relay shared by HTTP and WebSocket: credentials → region → parse → balance →
 * rate limit → a plan that sorts every call (refused, local, cached, relayed; call-plan.ts) →
 * one loop that acts on it: the upstream and the session are asked, then every call is counted
 * and metered once. Nothing here waits on anything but the upstream (and a first-sight token
 * resolution). Refusals are DomainErrors; the edges map them.
 */
export class RelayService {
  private readonly fallbackRps = PLANS.free.nodeRps;
  private readonly rules: PlanRules;
  /**
   * The one network this endpoint serves over HTTP JSON-RPC, if it serves one only (`shared`:
   * S): every HTTP request here is for it, whatever its token. Undefined at a regional endpoint.
   */
  private readonly endpointNetwork: Network | undefined;

  constructor(
    private readonly options: RelayOptions,
    /** Also what the WebSocket edge watches for revocations of its sessions' tokens. */
    readonly credentials: CredentialService,
    private readonly router: UpstreamRouter,
    private readonly cache: LruCache<string>,
    private readonly limiter: RateLimit,
    private readonly meter: UsageMeter,
    private readonly metrics: GatewayMetrics,
  ) {
    this.rules = planRules(options.maxLogsBlockRange, cache);
    const served = networksAt(options.endpoint).filter((n) =>
      isOffered(n, options.endpoint, 'jsonrpc'),
    );
    this.endpointNetwork = served.length === 1 ? served[0] : undefined;
  }

  /**
   * The network an HTTP request refused before it was relayed is for, as its request line says
   * (README "Request log"): its token's when the token was found, else this endpoint's when it
   * serves one network over HTTP (the shared endpoint: S), else none (a regional endpoint: only
   * the token names the network).
   */
  private networkOfRefused(refused: RefusedAuthorization): Network | undefined {
    return refused.network ?? this.endpointNetwork;
  }

  /** The token's account and network on this interface, or why not. */
  async authorize(token: string, where: Interface): Promise<Authorized | DomainError> {
    const outcome = await this.authorization(token, where);
    return 'refused' in outcome ? outcome.refused : outcome;
  }

  /**
   * `authorize`, a refusal keeping what is known of the token: its network and account when it
   * was found (network not offered here); neither for an unknown token (the path holds only the
   * token, the token names the network) or credentials unavailable.
   */
  async authorization(token: string, where: Interface): Promise<Authorized | RefusedAuthorization> {
    const pending = this.credentials.lookup(token);
    const lookup = pending instanceof Promise ? await pending : pending;
    if ('unavailable' in lookup)
      return { refused: CREDENTIALS_UNAVAILABLE, network: undefined, token: undefined };
    if (!lookup.found)
      return { refused: UNKNOWN_ACCESS_TOKEN, network: undefined, token: undefined };
    const network = NETWORKS[lookup.token.network];
    if (!isOffered(network, this.options.endpoint, where === 'http' ? 'jsonrpc' : where))
      return { refused: networkNotOffered(network, where), network, token: lookup.token };
    return { token: lookup.token, network };
  }

  /**
   * The request line's fields of an HTTP request refused before its body was read (413, 415):
   * no calls read; the token's network and account when it names a known token (a known one
   * on a network not offered here too, as its 404 logs them), else as a 401 or 503 logs them
   * (`networkOfRefused`: the endpoint's network when it serves one, no account).
   */
  async unreadRequest(token: string): Promise<LoggedAnswer> {
    const auth = await this.authorization(token, 'http');
    return {
      network: ('refused' in auth ? this.networkOfRefused(auth) : auth.network)?.key,
      account: auth.token?.accountId,
      calls: 0,
      billedCalls: 0,
      cu: 0,
    };
  }

  async handleHttp(token: string, body: string): Promise<RelayAnswer> {
    const auth = await this.authorization(token, 'http');
    if ('refused' in auth) {
      const parsed = parseRequest(body, { maxBatchSize: this.options.maxBatch });
      const network = this.networkOfRefused(auth);
      // The token could not be checked (503): the request is one this endpoint may serve on a
      // retry, for its one network, so its answer says what a served one's would (README, Network
      // S). An unknown token (401) or one of a network not served here (404) is served nothing.
      return relayAnswer(
        auth.refused,
        serializeRefusal(parsed, jsonRpcErrorOf(auth.refused)),
        network,
        auth.token,
        callsAsParsed(parsed),
        auth.refused === CREDENTIALS_UNAVAILABLE && namesDeprecated(network, parsed),
      );
    }
    return this.handle(auth.token, auth.network, body, 'http');
  }

  /**
   * The JSON-RPC answer to a message refused whole before its calls were relayed (its
   * credential, the network not offered here, the connection's cap on calls in flight): the body
   * is parsed only now, on the refusal's path, so the answer carries the message's ids
   * (`serializeRefusal`; null where none can be read); and its request line's fields: the calls
   * it held as parsed, none billed, the network and account as far as they are known (a
   * WebSocket session's, whose token was checked at the upgrade).
   */
  refusedMessage(
    error: DomainError,
    text: string,
    known: { network?: Network; accountId?: string } = {},
  ): { body: string; logged: LoggedAnswer } {
    const parsed = parseRequest(text, { maxBatchSize: this.options.maxBatch });
    return {
      body: serializeRefusal(parsed, jsonRpcErrorOf(error)),
      logged: {
        network: known.network?.key,
        account: known.accountId,
        calls: callsAsParsed(parsed),
        billedCalls: 0,
        cu: 0,
      },
    };
  }

  async handle(
    token: ResolvedToken,
    network: Network,
    text: string,
    transport: Transport,
    sessionMethods?: SessionMethodHandler,
    abandoned?: AbortSignal,
  ): Promise<RelayAnswer> {
    // The request's node answers stay held in the worker's budget until its answer is built,
    // whatever its end (answered, refused, failed, client gone): ADR 0215 amendment.
    const budget = this.answerBudget();
    try {
      return await this.answer(token, network, text, transport, budget, sessionMethods, abandoned);
    } finally {
      budget.release();
    }
  }

  private answerBudget(): AnswerBudget {
    return new AnswerBudget(this.options.maxResponseBytes, this.options.answersInFlight);
  }

  private async answer(
    token: ResolvedToken,
    network: Network,
    text: string,
    transport: Transport,
    budget: AnswerBudget,
    sessionMethods?: SessionMethodHandler,
    abandoned?: AbortSignal,
  ): Promise<RelayAnswer> {
    const parsed = parseRequest(text, { maxBatchSize: this.options.maxBatch });
    const items: readonly RpcRequestItem[] =
      parsed.kind === 'single' ? [parsed.item] : parsed.items;
    const deprecated = namesDeprecated(network, parsed);
    const estimate = this.credentials.estimate(token.accountId);
    const admitting = this.admit(token, items, estimate);
    const refused = admitting instanceof Promise ? await admitting : admitting;
    if (refused !== undefined) return refusedWhole(refused, parsed, network, token, deprecated);

    // Shared estimates (ADR 0201 amendment): the CU leased cover the calls, or a lease is awaited.
    if (estimate?.pooled === true) {
      const covering = estimate.cover(cuOfCalls(network, items));
      if (covering !== undefined) {
        await covering;
        // The pool had nothing left for this state: refused whole, as admission refuses a spent
        // estimate (402 / -32040), not call by call under HTTP 200 (QA S).
        const unpaid = balanceRefusal(this.credentials.account(token.accountId), estimate);
        if (unpaid !== undefined) return refusedWhole(unpaid, parsed, network, token, deprecated);
      }
    }
    // Its WebSocket connection closed meanwhile (ADR 0203 amendment): not relayed, not billed.
    if (abandoned?.aborted === true)
      return relayAnswer(undefined, '', network, token, callsAsParsed(parsed), deprecated);
    const hadCu = estimate !== undefined && !estimate.spent;
    const plan = planCalls(
      network,
      items,
      this.rules,
      transport,
      this.router.pool(network.key)?.headHeight,
      sessionMethods !== undefined,
      estimate,
      unpaidRefusal(this.credentials.account(token.accountId)),
    );
    const spentHere = hadCu && estimate.spent;
    const acting = this.act(plan, items, network, token, sessionMethods, budget);
    if (acting !== undefined) await acting;
    const billed = this.count(plan, items, network, token);
    // This request spent what the estimate had left: the account's sessions learn it on the
    // next turn, once this answer is sent (over WebSocket the session may be the one ended).
    if (spentHere) setImmediate(() => this.credentials.ranOut(token.accountId));

    // Notifications (no id) run but get no answer.
    const answers = plan.answers;
    let body: string;
    if (parsed.kind === 'single') body = items[0]!.idRaw === undefined ? '' : (answers[0] ?? '');
    else {
      const sent: string[] = [];
      for (let i = 0; i < items.length; i++)
        if (items[i]!.idRaw !== undefined && answers[i] !== undefined) sent.push(answers[i]!);
      body = serializeBatch(sent) ?? '';
    }
    return relayAnswer(
      undefined,
      body,
      network,
      token,
      callsAsParsed(parsed),
      deprecated,
      billed.calls,
      billed.cu,
    );
  }

  /**
   * Calls made on behalf of another protocol (gRPC BorApi): the same balance and rate checks
   * as an HTTP request of as many calls (one plan-RPS token per call, so a GetBlockInfoInBatch
   * of 100 blocks takes 100, as an HTTP batch of 100 does, debt included: `take`), relayed
   * without the method table (Bor-specific methods), each answered call metered under its
   * JSON-RPC method. Throws the refusal as a DomainError. `options` (a gRPC method answered by
   * a second try, GetAuthor): see InternalCallOptions. `tally`: where the calls asked, billed
   * and their CU are added up (refused ones counted as asked).
   */
  async relayInternal(
    token: ResolvedToken,
    network: Network,
    calls: readonly OutCall[],
    options?: InternalCallOptions,
    tally?: CallTally,
  ): Promise<CallAnswer[]> {
    if (tally !== undefined) tally.calls += calls.length;
    const abandoned = options?.abandoned;
    if (abandoned?.aborted === true) return calls.map(() => NOT_SENT);
    const estimate = this.credentials.estimate(token.accountId);
    // Paid whole: a request the estimate cannot cover is refused by the balance check, before
    // it takes plan-RPS tokens it would keep (QA: refused for CU, then for the rate it never used).
    const whole = wholeCuOf(network, calls);
    if (options?.admitted !== true) {
      const taking = this.take(token, calls.length, estimate, whole);
      const refused = taking instanceof Promise ? await taking : taking;
      if (refused !== undefined) throw refused;
    }
    if (estimate !== undefined) {
      if (estimate.pooled) {
        const covering = estimate.cover(whole.cu);
        if (covering !== undefined) await covering;
      }
      this.spendWhole(token, network, calls, estimate, whole);
    }
    const budget = this.answerBudget();
    try {
      return this.meterInternal(
        token,
        network,
        calls,
        estimate,
        await this.router.send(network.key, token.accountId, calls, budget, abandoned),
        tally,
      );
    } finally {
      budget.release();
    }
  }

  /** Meters a gRPC method's answered calls (`relayInternal`). */
  private meterInternal(
    token: ResolvedToken,
    network: Network,
    calls: readonly OutCall[],
    estimate: SpendEstimate | undefined,
    answers: CallAnswer[],
    tally: CallTally | undefined,
  ): CallAnswer[] {
    for (let i = 0; i < answers.length; i++) {
      const answer = answers[i]!;
      const method = calls[i]!.method;
      let cu: number | undefined;
      if (answer.kind === 'result') cu = this.served(token, network, method, 'ok', estimate);
      else if (isBilled(answer))
        cu = this.served(token, network, method, String(answer.error.code), estimate);
      if (cu !== undefined) {
        if (tally !== undefined) {
          tally.billedCalls++;
          tally.cu += cu;
        }
      } else {
        if (answer.kind === 'node_error')
          this.metrics.countCall(network.key, method, String(answer.error.code));
        estimate?.giveBack(cuForCall(network, method));
      }
    }
    return answers;
  }

  /** The request-level checks: balance, then plan RPS for its valid calls. */
  private admit(
    token: ResolvedToken,
    items: readonly RpcRequestItem[],
    estimate: SpendEstimate | undefined,
  ): DomainError | undefined | Promise<DomainError | undefined> {
    let valid = 0;
    for (const item of items) if (item.valid) valid++;
    if (valid === 0) return balanceRefusal(this.credentials.account(token.accountId), estimate);
    return this.take(token, valid, estimate);
  }

  /**
   * The CU of a gRPC method's calls from the account's estimate, all or none: a method's answer
   * cannot be partial, so when the estimate does not cover every call the method is refused
   * (throws; `balanceRefusal` says why: exhausted, or more than is left) and what it took goes
   * back. Admission refused it already unless the calls raced another request's, or a second
   * try (`admitted`), or the fleet's pool is what is short.
   */
  private spendWhole(
    token: ResolvedToken,
    network: Network,
    calls: readonly OutCall[],
    estimate: SpendEstimate,
    whole: WholeCu,
  ): void {
    const hadCu = !estimate.spent;
    let taken = 0;
    for (const call of calls) {
      const cu = cuForCall(network, call.method);
      if (!estimate.take(cu)) {
        estimate.giveBack(taken);
        const account = this.credentials.account(token.accountId);
        throw balanceRefusal(account, estimate, whole) ?? unpaidRefusal(account);
      }
      taken += cu;
    }
    if (hadCu && estimate.spent) this.credentials.ranOut(token.accountId);
  }

  /**
   * The one order of admission, for every interface: balance (a request paid whole, `whole`:
   * all of its CU), then plan RPS, so a request refused for its balance keeps no token.
   * Synchronous unless the limiter leases from the replica primary (ADR 0204).
   */
  private take(
    token: ResolvedToken,
    calls: number,
    estimate: SpendEstimate | undefined,
    whole?: WholeCu,
  ): DomainError | undefined | Promise<DomainError | undefined> {
    const account = this.credentials.account(token.accountId);
    const unpaid = balanceRefusal(account, estimate, whole);
    if (unpaid !== undefined) return unpaid;
    const rps = account?.nodeRps ?? this.fallbackRps;
    const taking = this.limiter.take(token.accountId, calls, rps);
    if (taking instanceof Promise)
      return taking.then((taken) => (taken.ok ? undefined : rateLimited(rps, taken.retryAfterMs)));
    return taking.ok ? undefined : rateLimited(rps, taking.retryAfterMs);
  }

  /**
   * Asks the upstream and the session for the calls the plan gave them and fills their answers;
   * undefined (nothing to wait for) when the plan answered every call itself.
   */
  private act(
    plan: CallPlan,
    items: readonly RpcRequestItem[],
    network: Network,
    token: ResolvedToken,
    sessionMethods: SessionMethodHandler | undefined,
    budget: AnswerBudget,
  ): Promise<unknown> | undefined {
    const session =
      sessionMethods === undefined || plan.sessionAt.length === 0
        ? undefined
        : Promise.all(
            plan.sessionAt.map((i) => this.askSession(plan, i, items, network, sessionMethods)),
          );
    if (plan.relayed.length === 0) return session;
    const relaying = this.router
      .send(network.key, token.accountId, plan.relayed, budget)
      .then((relayed) => this.fill(plan, items, network, relayed));
    return session === undefined ? relaying : Promise.all([relaying, session]);
  }

  private fill(
    plan: CallPlan,
    items: readonly RpcRequestItem[],
    network: Network,
    relayed: CallAnswer[],
  ): void {
    for (let k = 0; k < relayed.length; k++) {
      const i = plan.relayedAt[k]!;
      const idRaw = items[i]!.idRaw ?? 'null';
      const answer = relayed[k]!;
      if (answer.kind === 'result') {
        plan.answers[i] = serializeSuccess(idRaw, answer.resultText);
        plan.statuses[i] = 'ok';
        const key = plan.cacheKeys[k];
        if (
          key !== undefined &&
          isCacheableResult(plan.relayed[k]!.method, safeParse(answer.resultText), plan.finalized)
        )
          this.cache.set(key, answer.resultText);
      } else if (answer.kind === 'node_error') {
        plan.answers[i] =
          answer.errorRaw !== undefined
            ? serializeErrorRaw(idRaw, answer.errorRaw)
            : serializeErrorObject(idRaw, answer.error);
        plan.statuses[i] = String(answer.error.code);
        if (!isBilled(answer)) {
          // The node does not implement the method (-32601): counted, not billed.
          plan.sorts[i] = SORT.REFUSED;
          plan.spend?.giveBack(cuForCall(network, plan.relayed[k]!.method));
        }
      } else {
        const error = jsonRpcErrorOf(answer.error);
        plan.answers[i] = serializeErrorObject(idRaw, error);
        // Not billed: no node answered. Marked so the count below leaves it out.
        plan.statuses[i] = String(error.code);
        plan.sorts[i] = SORT.REFUSED;
        plan.spend?.giveBack(cuForCall(network, plan.relayed[k]!.method));
      }
    }
  }

  private async askSession(
    plan: CallPlan,
    i: number,
    items: readonly RpcRequestItem[],
    network: Network,
    sessionMethods: SessionMethodHandler,
  ): Promise<void> {
    const idRaw = items[i]!.idRaw ?? 'null';
    const outcome = await sessionMethods(items[i] as RpcCall);
    if ('result' in outcome) {
      plan.answers[i] = serializeSuccess(idRaw, JSON.stringify(outcome.result));
      plan.statuses[i] = 'ok';
    } else {
      const error = jsonRpcErrorOf(outcome.error);
      plan.answers[i] = serializeErrorObject(idRaw, error);
      plan.statuses[i] = String(error.code);
      plan.sorts[i] = SORT.REFUSED;
      plan.spend?.giveBack(cuForCall(network, (items[i] as RpcCall).method));
    }
  }

  /**
   * The one place calls are counted (metrics) and billed (meter), each call once; returns the
   * calls billed and their CU.
   */
  private count(
    plan: CallPlan,
    items: readonly RpcRequestItem[],
    network: Network,
    token: ResolvedToken,
  ): { calls: number; cu: number } {
    const billed = { calls: 0, cu: 0 };
    for (let i = 0; i < items.length; i++) {
      const sort = plan.sorts[i]!;
      const status = plan.statuses[i]!;
      // A refused call keeps its method's name when the network knows it, whatever else was
      // wrong (its params or envelope: QA PP, a by-name sui_tryMultiGetPastObjects was filed
      // under "other"); an unknown or missing name is "other", so the label set stays bounded.
      if (sort === SORT.INVALID || sort === SORT.REFUSED) {
        const named = items[i]!.method;
        const label = named !== undefined && network.methods.has(named) ? named : 'other';
        this.metrics.countCall(network.key, label, status);
        continue;
      }
      const method = (items[i] as RpcCall).method;
      if (sort === SORT.CACHED) this.metrics.countCache(network.key, 'hit');
      else if (sort === SORT.RELAYED_CACHEABLE) this.metrics.countCache(network.key, 'miss');
      billed.calls++;
      billed.cu += this.served(token, network, method, status, plan.spend);
    }
    return billed;
  }

  /**
   * A call a node (or the gateway on its behalf) answered: counted and billed, and metered in
   * the spend estimate it was taken from. Returns its CU.
   */
  private served(
    token: ResolvedToken,
    network: Network,
    method: string,
    status: string,
    estimate: SpendEstimate | undefined,
  ): number {
    this.metrics.countCall(network.key, method, status);
    const cu = cuForCall(network, method);
    this.meter.add(token.accountId, network.key, method, cu);
    estimate?.metered(cu);
    this.metrics.countCu(network.key, cu);
    return cu;
  }
}

/**
 * The one place the `Deprecation` header is decided (ADR 0214): the request names a method its
 * network deprecates, whatever its calls' fate, the batch's (over the cap: QA PP) or the
 * request's (a rate or balance refusal, the credential check unavailable). Never for a request
 * whose network is not known (a regional endpoint's 503).
 */
function namesDeprecated(network: Network | undefined, parsed: ParsedRequest): boolean {
  const deprecated = network?.deprecatedMethods ?? null;
  return deprecated !== null && namesAnyOf(parsed, deprecated);
}

/** A request refused before any call is relayed: `error` under each of its ids, nothing billed. */
function refusedWhole(
  error: DomainError,
  parsed: ParsedRequest,
  network: Network,
  token: ResolvedToken,
  deprecated: boolean,
): RelayAnswer {
  return relayAnswer(
    error,
    serializeRefusal(parsed, jsonRpcErrorOf(error)),
    network,
    token,
    callsAsParsed(parsed),
    deprecated,
  );
}

/**
 * The answer of `handle`, always built by this one object literal. It was an object spread
 * (`{ ...base, status, body, calls }`), which made V8 promote about 350 bytes per request out of
 * the young generation, more than doubling every scavenge's pause (ADR 0207).
 */
function relayAnswer(
  refused: DomainError | undefined,
  body: string,
  network: Network | undefined,
  token: ResolvedToken | undefined,
  calls: number,
  deprecated: boolean,
  billedCalls = 0,
  cu = 0,
): RelayAnswer {
  return {
    refused,
    body,
    network: network?.key,
    account: token?.accountId,
    calls,
    billedCalls,
    cu,
    deprecated,
  };
}

/** A gRPC method's call not sent: the method was abandoned before its calls were admitted. */
const NOT_SENT: CallAnswer = { kind: 'gateway_error', error: CALL_ABANDONED };

/** The CU of a request paid whole (a gRPC method's calls), and of its last call. */
function wholeCuOf(network: Network, calls: readonly OutCall[]): WholeCu {
  const last = calls[calls.length - 1];
  return {
    cu: cuOfCalls(network, calls),
    lastCu: last === undefined ? 0 : cuForCall(network, last.method),
  };
}

/** The CU of a request's valid calls, all billed: what its plan takes from the estimate at most. */
function cuOfCalls(network: Network, calls: readonly (RpcRequestItem | OutCall)[]): number {
  let cu = 0;
  for (const call of calls)
    if (!('valid' in call) || call.valid) cu += cuForCall(network, call.method);
  return cu;
}
