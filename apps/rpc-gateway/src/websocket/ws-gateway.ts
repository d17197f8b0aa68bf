import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import type { Logger } from 'pino';
import type { DomainError } from '@meridian/errors';
import type { NetworkKey } from '@meridian/networks';
import { requestIdOf } from '@meridian/platform-http';
import { jsonRpcErrorOf, type RpcCall, serializeErrorObject } from '@meridian/jsonrpc';
import { sha256Hex } from '../credentials/credential-cache';
import type { Authorized, RelayService } from '../relay/relay.service';
import {
  ACCESS_TOKEN_REVOKED,
  balanceRefusal,
  CU_EXHAUSTED,
  gatewayHttpStatusOf,
  invalidParams,
  limitExceeded,
  planLimitExceeded,
  retryAfterSecondsOf,
  SUBSCRIPTION_LIMIT_UNAVAILABLE,
  UPSTREAM_UNAVAILABLE,
} from '../relay/gateway-errors';
import { TOKEN_PATH, tokenOf } from '../relay/token-path';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import type { RequestLog } from '../observability/request-log';
import {
  callSlotsOf,
  callsInFlightRefused,
  connectionsRefused,
  SHUTTING_DOWN,
  TokenConnections,
} from './connection-limits';
import {
  AccountBudget,
  accountCallsInFlightRefused,
  accountConnectionsRefused,
  accountUnreadReason,
  DEFAULT_ACCOUNT_BUDGET,
} from './account-budget';
import { checkSubscribeParams, checkUnsubscribeParams } from './subscribe-params';
import { subscriptionGap, UpstreamSubscribeError, type Subscriptions } from './subscription-hub';

/** Close code of a session whose access ended (RFC 6455 policy violation). */
const CLOSE_POLICY = 1008;
/**
 * Close code of a session whose subscription missed more than the hub fills in (RFC 6455
 * service restart: reconnect, subscribe again, resync; ADR 0203 amendment).
 */
const CLOSE_RESYNC = 1012;
/**
 * Close code of a session cut for falling behind on its notifications: 1013 "Try Again Later"
 * (IANA WebSocket registry: the server sheds a client under a temporary condition). Reconnecting
 * and subscribing again is the client's remedy, unlike 1008, which here means its access ended.
 */
export const CLOSE_SLOW_CONSUMER = 1013;
const NOT_FOUND_BODY = '{"error":"not_found","message":"not found"}';

export interface WsOptions {
  maxSubscriptionsPerConnection: number;
  maxSubscriptionsPerAccount: number;
  maxBufferedBytes: number;
  maxMessageBytes: number;
  /** Calls (a batch counts its calls) a connection may have in flight; past it: -32005 at once. */
  maxCallsInFlightPerConnection: number;
  /** Open connections per access token in this process; past it the upgrade is answered 429. */
  maxConnectionsPerToken: number;
  /**
   * One account's budget in this process across its tokens and connections (ADR 0203 amendment
   * "One account's budget per process"); DEFAULT_ACCOUNT_BUDGET's values where absent.
   */
  maxConnectionsPerAccount?: number;
  maxCallsInFlightPerAccount?: number;
  maxUnreadBytesPerAccount?: number;
  /** One line per message (REQUEST_LOGS), in the request log's shape; none when absent. */
  requestLog?: RequestLog;
  /**
   * Runs `run` after `ms` and returns its cancel; the slow-client close deadline's timer (tests
   * inject one they fire themselves). Default: an unref'd setTimeout.
   */
  after?: (ms: number, run: () => void) => () => void;
}

/**
 * How long a client cut as a slow consumer has to read what was queued before the close frame
 * and answer it; then the socket is terminated (ws would wait 30 s).
 */
export const WS_SLOW_CLIENT_CLOSE_MS = 5_000;

/**
 * How long a client with answers waiting may read none of what is queued before it is cut as a
 * slow consumer (the answers are left out of WS_MAX_BUFFERED_BYTES; this bounds them in time).
 */
export const WS_ANSWER_STALL_MS = 30_000;

const afterTimeout = (ms: number, run: () => void): (() => void) => {
  const timer = setTimeout(run, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

/** How long a stopping gateway waits for clients to answer its close frame before it cuts them. */
export const WS_CLOSE_GRACE_MS = 1_000;

/** An open session, as the revocation and balance feeds reach it. */
interface Session {
  /**
   * Sends `error` and closes the socket with `reason`: under id null when a feed ended it, or as
   * `answer` (the error under the ids of the message it answers) when a message found it ended.
   */
  end(error: DomainError, reason: string, answer?: string, closeCode?: number): void;
  /** Whether it holds a subscription now. */
  subscribed(): boolean;
}

/**
 * WebSocket on the same path as HTTP (`/<token>`): the token is checked before the upgrade
 * (401/404 as plain HTTP answers), then every message goes through the same relay as HTTP, with
 * eth_subscribe/eth_unsubscribe answered here from the shared subscription hub. A token revoked
 * while its sessions are open (rolled, deleted) ends them at once: the revocation feed calls
 * `revoked` with the token's hash. An account that runs out of CU ends its sessions that hold
 * subscriptions the same way (-32040): notifications are not billed, so a feed opened while it
 * could pay must not run on unpaid; sessions without one stay, their calls answered -32040
 * (ADR 0210).
 */
export class WsGateway {
  private readonly wss: WebSocketServer;
  /** Open sessions by sha256 of their token (what revocations name). */
  private readonly sessions = new Map<string, Set<Session>>();
  /** The same sessions by account (what the balance feed names). */
  private readonly accounts = new Map<string, Set<Session>>();
  /** Open connections per token hash, counted from the upgrade to the socket's close. */
  private readonly perToken: TokenConnections;
  /** What each account holds in this process: connections, calls in flight, unread answers. */
  private readonly budget: AccountBudget<{ cut(): void }>;
  /** Each open connection's abandon switch: aborted when it closes (or the gateway stops). */
  private readonly abandons = new Set<AbortController>();
  private stopping = false;

  constructor(
    private readonly relay: RelayService,
    private readonly hub: Subscriptions,
    private readonly metrics: GatewayMetrics,
    private readonly logger: Logger,
    private readonly options: WsOptions,
  ) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload: options.maxMessageBytes });
    this.perToken = new TokenConnections(options.maxConnectionsPerToken);
    this.budget = new AccountBudget({
      connections: options.maxConnectionsPerAccount ?? DEFAULT_ACCOUNT_BUDGET.connections,
      callsInFlight: options.maxCallsInFlightPerAccount ?? DEFAULT_ACCOUNT_BUDGET.callsInFlight,
      unreadBytes: options.maxUnreadBytesPerAccount ?? DEFAULT_ACCOUNT_BUDGET.unreadBytes,
    });
    relay.credentials.onRevoked((hash) => this.revoked(hash));
    relay.credentials.onExhausted((accountId) => this.exhausted(accountId));
  }

  attach(server: Server): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const requestId = requestIdOf(request);
      this.upgrade(request, socket, head, requestId).catch((error: unknown) => {
        // Nothing a client sends may end the process: answer, log, and drop this socket only.
        this.logger.error({ err: error, request_id: requestId }, 'WebSocket upgrade failed');
        refuseUpgrade(socket, 500, '{"error":"internal","message":"internal error"}');
      });
    });
  }

  /**
   * Stops the WebSocket edge: new upgrades are refused (503), every connection's work is
   * abandoned (nothing more relayed or billed for it), each client gets a 1001 close frame and
   * whatever has not closed after WS_CLOSE_GRACE_MS is cut, so no socket holds the shutdown's
   * bound (a client that never answers the close frame held it for ws's own 30 s).
   */
  close(graceMs = WS_CLOSE_GRACE_MS): Promise<void> {
    this.stopping = true;
    for (const abandon of this.abandons) abandon.abort();
    for (const client of this.wss.clients) client.close(1001, 'server shutting down');
    this.wss.close();
    if (this.wss.clients.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const cut = setTimeout(() => {
        for (const client of this.wss.clients) client.terminate();
        resolve();
      }, graceMs);
      const check = () => {
        if (this.wss.clients.size > 0) return;
        clearTimeout(cut);
        resolve();
      };
      for (const client of this.wss.clients) client.once('close', check);
    });
  }

  /** Ends every open session of a revoked token (its sha256). */
  revoked(hash: string): number {
    const open = this.sessions.get(hash);
    if (open === undefined) return 0;
    this.sessions.delete(hash);
    for (const session of open) session.end(ACCESS_TOKEN_REVOKED, 'access token revoked');
    return open.size;
  }

  /** Ends the sessions of an account out of CU that hold subscriptions; returns how many. */
  exhausted(accountId: string): number {
    let ended = 0;
    for (const session of this.accounts.get(accountId) ?? [])
      if (session.subscribed()) {
        const refusal = balanceRefusal(this.relay.credentials.account(accountId)) ?? CU_EXHAUSTED;
        session.end(
          refusal,
          refusal.code === 'plan_required' ? 'no plan' : 'compute units exhausted',
        );
        ended++;
      }
    return ended;
  }

  private async upgrade(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    requestId: string,
  ): Promise<void> {
    socket.on('error', () => undefined);
    const match = TOKEN_PATH.exec(request.url ?? '');
    if (!match) return refuseUpgrade(socket, 404, NOT_FOUND_BODY);
    const token = tokenOf(match[1]!);
    const auth = this.stopping ? SHUTTING_DOWN : await this.relay.authorize(token, 'websocket');
    if (auth instanceof Error) return refuseWith(socket, auth);
    if (this.stopping) return refuseWith(socket, SHUTTING_DOWN);
    // Taken after the awaits, in the same turn as the upgrade, and given back when the socket
    // closes, however it ends (the upgrade refused by ws itself included).
    const hash = sha256Hex(token);
    if (!this.perToken.take(hash)) {
      this.metrics.requests.inc({ transport: 'websocket', status: '429' });
      return refuseWith(socket, connectionsRefused(this.options.maxConnectionsPerToken));
    }
    socket.once('close', () => this.perToken.give(hash));
    // The account's connections across all its tokens, taken and given back the same way.
    const accountId = auth.token.accountId;
    if (!this.budget.openConnection(accountId)) {
      this.metrics.requests.inc({ transport: 'websocket', status: '429' });
      return refuseWith(socket, accountConnectionsRefused(this.budget.limits.connections));
    }
    socket.once('close', () => this.budget.closeConnection(accountId));
    this.wss.handleUpgrade(request, socket, head, (ws) => this.session(ws, token, auth, requestId));
  }

  private session(ws: WebSocket, token: string, first: Authorized, connectionId: string): void {
    this.metrics.wsConnections.inc();
    const hash = sha256Hex(token);
    const mine = new Map<string, { network: NetworkKey; type: string }>();
    /**
     * eth_subscribe calls between their check and their answer. Each holds a slot of the
     * per-connection limit from its check on, before its first await: counting only `mine`
     * (filled after the awaits) let 105 frames sent at once all pass a limit of 100.
     */
    let pending = 0;
    const accountId = first.token.accountId;
    let cut = false;
    let ended = false;
    /** Calls of this connection's messages between their arrival and their answer. */
    let inFlight = 0;
    const abandon = new AbortController();
    this.abandons.add(abandon);
    /**
     * Bytes of answers to this client's own calls queued but not yet written to the socket. They
     * are bounded by the calls in flight (a call holds its slot until its answer is written) and
     * each answer's size limit, so they do not count as falling behind: a client that reads a
     * large answer at its own pace while notifications arrive is not cut (QA M1).
     */
    let answering = 0;
    const max = this.options.maxBufferedBytes;
    const after = this.options.after ?? afterTimeout;
    /**
     * The slow-consumer rule: before anything is queued, what the client has not read besides
     * the answers being written (notifications, session errors, refusals past the in-flight cap)
     * must not exceed WS_MAX_BUFFERED_BYTES. Past it the session ends with a close frame saying
     * why, and is terminated if the close handshake has not ended within
     * WS_SLOW_CLIENT_CLOSE_MS (the frame waits behind everything unread).
     */
    const fallenBehind = (): boolean => {
      const behind = ws.bufferedAmount - answering;
      if (behind <= max) return false;
      cutSlow(slowConsumerReason(max), behind);
      return true;
    };
    const cutSlow = (reason: string, behind: number) => {
      if (cut) return;
      cut = true;
      stopWatching?.();
      // Its unread answers leave the account's count: the terminate below bounds them in time.
      this.budget.forget(accountId, budgetKey);
      this.metrics.wsSlowClientsCut.inc();
      this.logger.warn(
        {
          connection_id: connectionId,
          account: accountId,
          buffered: ws.bufferedAmount,
          behind,
          reason,
        },
        'slow WebSocket client cut off',
      );
      // Nothing more is relayed or billed for it, and its feeds stop now, not at the close.
      abandon.abort();
      dropSubscriptions();
      const cancel = after(WS_SLOW_CLIENT_CLOSE_MS, () => ws.terminate());
      ws.once('close', cancel);
      ws.close(CLOSE_SLOW_CONSUMER, reason);
    };
    /**
     * The answers' own bound in time: a client with answers waiting that reads none of what is
     * queued for WS_ANSWER_STALL_MS is cut too, so one that asks and never reads cannot pin
     * its answers' memory. Read progress is what the socket took: bytes queued minus
     * bufferedAmount (frame headers make it lag, never lead).
     */
    let queued = 0;
    let stopWatching: (() => void) | undefined;
    /** This connection in its account's budget: the account's unread answers may cut it. */
    const budgetKey = {
      cut: () => cutSlow(accountUnreadReason(this.budget.limits.unreadBytes), ws.bufferedAmount),
    };
    const watchAnswers = () => {
      if (stopWatching !== undefined || cut || ended) return;
      const taken = queued - ws.bufferedAmount;
      stopWatching = after(WS_ANSWER_STALL_MS, () => {
        stopWatching = undefined;
        if (cut || ended || answering === 0 || ws.readyState !== WebSocket.OPEN) return;
        if (queued - ws.bufferedAmount > taken) return watchAnswers();
        cutSlow(stalledReason(WS_ANSWER_STALL_MS), ws.bufferedAmount);
      });
    };
    ws.once('close', () => stopWatching?.());
    const writable = () => !cut && !ended && ws.readyState === WebSocket.OPEN;
    const connection = {
      /** Queues a message the slow-consumer rule counts; false when the client was cut off. */
      send: (message: string): boolean => {
        if (!writable() || fallenBehind()) return false;
        queued += Buffer.byteLength(message);
        ws.send(message);
        return true;
      },
      /**
       * Queues the answer to a call in flight, not counted by the rule; resolves once it is
       * written to the socket (or the socket is gone), undefined when nothing was queued.
       */
      answer: (message: string): Promise<void> | undefined => {
        if (!writable() || fallenBehind()) return undefined;
        const bytes = Buffer.byteLength(message);
        answering += bytes;
        queued += bytes;
        this.metrics.wsUnreadAnswerBytes.inc(bytes);
        // Past the account's budget its connections holding the most unread are cut below (this
        // one may be among them), so that what the account's readers hold stays within it.
        const over = this.budget.queued(accountId, budgetKey, bytes);
        const written = new Promise<void>((resolve) =>
          ws.send(message, () => {
            answering -= bytes;
            this.metrics.wsUnreadAnswerBytes.dec(bytes);
            this.budget.written(accountId, budgetKey, bytes);
            resolve();
          }),
        );
        watchAnswers();
        for (const holder of over) holder.cut();
        return written;
      },
    };
    const session: Session = {
      // The one place a session-level DomainError reaches the client: a JSON-RPC error (id null
      // unless it answers a message), and the socket closed when the credential is no longer
      // valid.
      end: (error: DomainError, reason: string, answer?: string, closeCode = CLOSE_POLICY) => {
        if (ended) return;
        connection.send(answer ?? serializeErrorObject('null', jsonRpcErrorOf(error)));
        ended = true;
        dropSubscriptions();
        ws.close(closeCode, reason);
      },
      subscribed: () => mine.size > 0,
    };

    const sink = {
      notify: (subscriptionId: string, resultText: string): boolean =>
        connection.send(
          `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${subscriptionId}","result":${resultText}}}`,
        ),
      end: (subscriptionId: string, missedAbove: number) =>
        session.end(
          subscriptionGap(subscriptionId, missedAbove),
          'subscription gap not filled; resubscribe',
          undefined,
          CLOSE_RESYNC,
        ),
    };
    const forget = (id: string) => {
      const held = mine.get(id);
      if (held === undefined) return false;
      mine.delete(id);
      this.hub.release(accountId);
      this.metrics.clientSubscriptions.dec({ network: held.network, type: held.type });
      return this.hub.of(held.network)?.unsubscribe(id) ?? false;
    };
    const dropSubscriptions = () => {
      for (const id of [...mine.keys()]) forget(id);
    };

    const subscribe = async (
      call: RpcCall,
      auth: Authorized,
    ): Promise<{ result: unknown } | { error: DomainError }> => {
      if (call.method === 'eth_unsubscribe') {
        // Malformed params are refused (-32602, unbilled); an id this session does not hold
        // is `false` (billed, as geth answers it).
        const malformed = checkUnsubscribeParams(call.params);
        if (malformed !== null) return { error: malformed };
        return { result: forget(call.params[0] as string) };
      }
      const refused = this.checkSubscribe(call, mine.size + pending);
      if (refused) return { error: refused };
      const subs = this.hub.of(auth.network.key);
      if (subs === undefined) return { error: UPSTREAM_UNAVAILABLE };
      pending++;
      try {
        const limit = this.options.maxSubscriptionsPerAccount;
        // With several processes the count is the primary's; if it cannot answer, refuse.
        const reserved = await Promise.resolve(this.hub.reserve(accountId, limit)).catch(
          () => undefined,
        );
        if (reserved === undefined) return { error: SUBSCRIPTION_LIMIT_UNAVAILABLE };
        // The count is this replica's (ADR 0203 amendment): the message says so.
        if (!reserved)
          return {
            error: planLimitExceeded(
              `at most ${limit} subscriptions per account on this gateway replica`,
            ),
          };
        try {
          const id = await subs.subscribe(call.params, sink);
          const type = String(call.params[0]);
          mine.set(id, { network: auth.network.key, type });
          this.metrics.clientSubscriptions.inc({ network: auth.network.key, type });
          if (cut || ended || ws.readyState !== WebSocket.OPEN) forget(id);
          // The account ran out while the node subscribed: its feed would outlive the flip.
          else {
            const unpaid = balanceRefusal(this.relay.credentials.account(accountId));
            if (unpaid !== undefined) {
              forget(id);
              return { error: unpaid };
            }
          }
          return { result: id };
        } catch (error) {
          this.hub.release(accountId);
          if (error instanceof UpstreamSubscribeError)
            return { error: invalidParams(error.message.slice(0, 200)) };
          return { error: UPSTREAM_UNAVAILABLE };
        }
      } finally {
        // The slot now counts in `mine`, or was given back (refused, failed).
        pending--;
      }
    };

    const cap = this.options.maxCallsInFlightPerConnection;
    ws.on('message', (data, isBinary) => {
      if (abandon.signal.aborted) return;
      const text = isBinary
        ? Buffer.from(data as Buffer).toString('utf8')
        : (data as Buffer).toString();
      const calls = callSlotsOf(text);
      // Past the cap the message is answered at once under its ids, not queued (ADR 0203
      // amendment); a message alone in flight always runs, however large its batch.
      if (inFlight > 0 && inFlight + calls > cap) {
        this.refuseMessage(
          connectionId,
          callsInFlightRefused(cap),
          text,
          first,
          performance.now(),
          (body) => connection.send(body),
        );
        return;
      }
      // The same rule for the account across its connections and tokens in this process.
      if (!this.budget.takeCalls(accountId, calls)) {
        this.refuseMessage(
          connectionId,
          accountCallsInFlightRefused(this.budget.limits.callsInFlight),
          text,
          first,
          performance.now(),
          (body) => connection.send(body),
        );
        return;
      }
      inFlight += calls;
      // The calls hold their slots until their answer is written to the socket, so the answers
      // the slow-consumer rule leaves out are at most the cap's calls' worth.
      let written: Promise<void> | undefined;
      const reply = (answer: string): boolean => {
        written = connection.answer(answer);
        return written !== undefined;
      };
      // A failed message is logged with the session's id (the upgrade request's); no
      // AsyncLocalStorage in the gateway (ADR 0210).
      this.message(token, connectionId, text, abandon.signal, reply, session, first, subscribe)
        .catch((error: unknown) =>
          this.logger.error({ err: error, connection_id: connectionId }, 'ws message failed'),
        )
        .then(() => written)
        .finally(() => {
          inFlight -= calls;
          this.budget.giveCalls(accountId, calls);
        });
    });
    ws.on('close', () => {
      // Whatever the connection started is abandoned: calls not yet relayed are dropped (not
      // relayed, not billed) and the answers of those in flight are discarded.
      abandon.abort();
      this.abandons.delete(abandon);
      this.budget.forget(accountId, budgetKey);
      this.metrics.wsConnections.dec();
      this.untrack(this.sessions, hash, session);
      this.untrack(this.accounts, accountId, session);
      dropSubscriptions();
    });
    ws.on('error', () => undefined);
    this.track(this.sessions, hash, session);
    this.track(this.accounts, accountId, session);
    // A revocation that landed between the token check and now would have found no session.
    if (this.relay.credentials.wasRevoked(hash))
      session.end(ACCESS_TOKEN_REVOKED, 'access token revoked');
  }

  private async message(
    token: string,
    connectionId: string,
    text: string,
    abandoned: AbortSignal,
    send: (text: string) => boolean,
    session: Session,
    first: Authorized,
    subscribe: (
      call: RpcCall,
      auth: Authorized,
    ) => Promise<{ result: unknown } | { error: DomainError }>,
  ): Promise<void> {
    const started = performance.now();
    const auth = await this.relay.authorize(token, 'websocket');
    if (abandoned.aborted) return;
    if (auth instanceof Error) {
      // Refused before the message was read: read now, so the answer carries its ids.
      if (auth.kind === 'unauthenticated')
        return this.refuseMessage(
          connectionId,
          ACCESS_TOKEN_REVOKED,
          text,
          first,
          started,
          (body) => session.end(ACCESS_TOKEN_REVOKED, 'access token revoked', body),
        );
      return this.refuseMessage(connectionId, auth, text, first, started, send);
    }
    const answer = await this.relay.handle(
      auth.token,
      auth.network,
      text,
      'websocket',
      (call) => subscribe(call, auth),
      abandoned,
    );
    if (abandoned.aborted) return;
    // A refusal's body is its JSON-RPC answer under the message's ids (RelayAnswer).
    const body = answer.body;
    if (body) send(body);
    const status = answer.refused === undefined ? 200 : gatewayHttpStatusOf(answer.refused);
    this.metrics.requests.inc({ transport: 'websocket', status: String(status) });
    const seconds = (performance.now() - started) / 1000;
    this.metrics.requestDuration.observe({ transport: 'websocket' }, seconds);
    this.options.requestLog?.ws(connectionId, status, answer, seconds);
  }

  /**
   * Answers a message refused whole under its ids, and leaves its request line: every message
   * leaves one (README "Request log"), with the session's network and account, whose token was
   * checked at the upgrade.
   */
  private refuseMessage(
    connectionId: string,
    error: DomainError,
    text: string,
    first: Authorized,
    started: number,
    send: (body: string) => unknown,
  ): void {
    const { body, logged } = this.relay.refusedMessage(error, text, {
      network: first.network,
      accountId: first.token.accountId,
    });
    send(body);
    const status = gatewayHttpStatusOf(error);
    this.metrics.requests.inc({ transport: 'websocket', status: String(status) });
    this.options.requestLog?.ws(connectionId, status, logged, (performance.now() - started) / 1000);
  }

  private track(index: Map<string, Set<Session>>, key: string, session: Session): void {
    let open = index.get(key);
    if (open === undefined) {
      open = new Set();
      index.set(key, open);
    }
    open.add(session);
  }

  private untrack(index: Map<string, Set<Session>>, key: string, session: Session): void {
    const open = index.get(key);
    if (open === undefined) return;
    open.delete(session);
    if (open.size === 0) index.delete(key);
  }

  private checkSubscribe(call: RpcCall, connectionCount: number): DomainError | undefined {
    const malformed = checkSubscribeParams(call.params, call.paramsRaw);
    if (malformed !== null) return malformed;
    if (connectionCount >= this.options.maxSubscriptionsPerConnection)
      return limitExceeded(
        `at most ${this.options.maxSubscriptionsPerConnection} subscriptions per connection`,
      );
    return undefined;
  }
}

const REASONS: Readonly<Record<number, string>> = {
  401: 'Unauthorized',
  402: 'Payment Required',
  404: 'Not Found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** The close reason of a slow consumer's cut (at most 123 bytes, RFC 6455). */
export function slowConsumerReason(maxBufferedBytes: number): string {
  return `slow consumer: more than ${maxBufferedBytes} bytes of notifications unread`;
}

/** The close reason of a client cut for reading none of its answers for `stallMs`. */
export function stalledReason(stallMs: number): string {
  return `slow consumer: nothing read for ${stallMs / 1000} s with answers waiting`;
}

/** The upgrade refused with the gateway's refusal form: its HTTP status and JSON-RPC error. */
function refuseWith(socket: Duplex, error: DomainError): void {
  refuseUpgrade(
    socket,
    gatewayHttpStatusOf(error),
    serializeErrorObject('null', jsonRpcErrorOf(error)),
    retryAfterSecondsOf(error),
  );
}

function refuseUpgrade(
  socket: Duplex,
  status: number,
  body: string,
  retryAfterSeconds?: number,
): void {
  if (socket.destroyed) return;
  const retry = retryAfterSeconds === undefined ? '' : `Retry-After: ${retryAfterSeconds}\r\n`;
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${retry}Connection: close\r\n\r\n${body}`,
  );
}
