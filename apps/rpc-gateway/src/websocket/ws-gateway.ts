import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import type { Logger } from 'pino';
import type { NetworkKey } from '@meridian/networks';
import { requestIdOf } from '@meridian/platform-http';
import {
  JSONRPC_ERROR,
  type JsonRpcErrorObject,
  type RpcCall,
  serializeErrorObject,
} from '@meridian/jsonrpc';
import type { RelayService } from '../relay/relay.service';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import { UpstreamSubscribeError, type Subscriptions } from './subscription-hub';

const SUBSCRIPTION_TYPES = new Set(['newHeads', 'logs', 'newPendingTransactions']);
const TOKEN_PATH = /^\/([^/?]+)\/?(\?.*)?$/;

export interface WsOptions {
  maxSubscriptionsPerConnection: number;
  maxSubscriptionsPerAccount: number;
  maxBufferedBytes: number;
  maxMessageBytes: number;
  requestLogs: boolean;
}

/**
 * WebSocket on the same path as HTTP (`/<token>`): the token is checked before the upgrade
 * (401/404 as plain HTTP answers), then every message goes through the same relay as HTTP, with
 * eth_subscribe/eth_unsubscribe answered here from the shared subscription hub.
 */
export class WsGateway {
  private readonly wss: WebSocketServer;

  constructor(
    private readonly relay: RelayService,
    private readonly hub: Subscriptions,
    private readonly metrics: GatewayMetrics,
    private readonly logger: Logger,
    private readonly options: WsOptions,
  ) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload: options.maxMessageBytes });
  }

  attach(server: Server): void {
    server.on(
      'upgrade',
      (request: IncomingMessage, socket: Duplex, head: Buffer) =>
        void this.upgrade(request, socket, head),
    );
  }

  close(): void {
    for (const client of this.wss.clients) client.close(1001, 'server shutting down');
    this.wss.close();
  }

  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => undefined);
    const match = TOKEN_PATH.exec(request.url ?? '');
    if (!match) return refuse(socket, 404, '{"error":"not_found","message":"not found"}');
    const token = decodeURIComponent(match[1]!);
    const auth = await this.relay.authorize(token, 'websocket');
    if (!auth.ok) return refuse(socket, auth.answer.status, auth.answer.body);
    this.wss.handleUpgrade(request, socket, head, (ws) =>
      this.session(ws, token, requestIdOf(request)),
    );
  }

  private session(ws: WebSocket, token: string, connectionId: string): void {
    this.metrics.wsConnections.inc();
    const mine = new Map<string, { network: NetworkKey; type: string }>();
    let accountId: string | undefined;
    let cut = false;
    const connection = {
      send: (message: string): boolean => {
        if (cut) return false;
        if (ws.bufferedAmount > this.options.maxBufferedBytes) {
          cut = true;
          this.metrics.wsSlowClientsCut.inc();
          this.logger.warn(
            { connection_id: connectionId, buffered: ws.bufferedAmount },
            'slow WebSocket client cut off',
          );
          ws.terminate();
          return false;
        }
        ws.send(message);
        return true;
      },
    };
    const sink = {
      notify: (subscriptionId: string, resultText: string): boolean =>
        connection.send(
          `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${subscriptionId}","result":${resultText}}}`,
        ),
    };
    const forget = (id: string, account: string) => {
      const held = mine.get(id);
      if (held === undefined) return false;
      mine.delete(id);
      this.hub.release(account);
      this.metrics.clientSubscriptions.dec({ network: held.network, type: held.type });
      return this.hub.of(held.network)?.unsubscribe(id) ?? false;
    };

    ws.on('message', (data, isBinary) => {
      void (async () => {
        const started = performance.now();
        const auth = await this.relay.authorize(token, 'websocket');
        if (!auth.ok) {
          connection.send(
            serializeErrorObject('null', {
              code: JSONRPC_ERROR.UNAUTHORIZED,
              message: 'unauthorized: the access token was revoked',
            }),
          );
          ws.close(1008, 'access token revoked');
          return;
        }
        accountId = auth.token.accountId;
        const network = auth.network;
        const subs = this.hub.of(network.key);
        const text = isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString();
        const answer = await this.relay.handle(
          auth.token,
          network,
          text,
          'websocket',
          async (call: RpcCall) => {
            if (call.method === 'eth_unsubscribe') {
              const id = call.params[0];
              return { result: typeof id === 'string' && forget(id, auth.token.accountId) };
            }
            const refused = this.checkSubscribe(call, mine.size);
            if (refused) return { error: refused };
            if (subs === undefined)
              return {
                error: {
                  code: JSONRPC_ERROR.SERVER_ERROR,
                  message: 'server error: upstream node unavailable',
                },
              };
            const limit = this.options.maxSubscriptionsPerAccount;
            // With several processes the count is the primary's; if it cannot answer, refuse.
            const reserved = await Promise.resolve(
              this.hub.reserve(auth.token.accountId, limit),
            ).catch(() => undefined);
            if (reserved === undefined)
              return {
                error: {
                  code: JSONRPC_ERROR.SERVER_ERROR,
                  message: 'server error: subscription limit unavailable',
                },
              };
            if (!reserved)
              return {
                error: {
                  code: JSONRPC_ERROR.LIMIT_EXCEEDED,
                  message: `limit exceeded: at most ${limit} subscriptions per account`,
                },
              };
            try {
              const id = await subs.subscribe(call.params, sink);
              const type = String(call.params[0]);
              mine.set(id, { network: network.key, type });
              this.metrics.clientSubscriptions.inc({ network: network.key, type });
              if (cut || ws.readyState !== WebSocket.OPEN) forget(id, auth.token.accountId);
              return { result: id };
            } catch (error) {
              this.hub.release(auth.token.accountId);
              if (error instanceof UpstreamSubscribeError)
                return {
                  error: {
                    code: JSONRPC_ERROR.INVALID_PARAMS,
                    message: `invalid params: ${error.message}`,
                  },
                };
              return {
                error: {
                  code: JSONRPC_ERROR.SERVER_ERROR,
                  message: 'server error: upstream node unavailable',
                },
              };
            }
          },
        );
        if (answer.body) connection.send(answer.body);
        this.metrics.requests.inc({ transport: 'websocket', status: String(answer.status) });
        this.metrics.requestDuration.observe(
          { transport: 'websocket' },
          (performance.now() - started) / 1000,
        );
        if (this.options.requestLogs)
          this.logger.info(
            {
              connection_id: connectionId,
              network: answer.network,
              account: answer.account,
              calls: answer.calls,
              status: answer.status,
            },
            'rpc ws message',
          );
      })().catch((error: unknown) =>
        this.logger.error({ err: error, connection_id: connectionId }, 'ws message failed'),
      );
    });

    ws.on('close', () => {
      this.metrics.wsConnections.dec();
      if (accountId !== undefined) for (const id of [...mine.keys()]) forget(id, accountId);
    });
    ws.on('error', () => undefined);
  }

  private checkSubscribe(call: RpcCall, connectionCount: number): JsonRpcErrorObject | undefined {
    const type = call.params[0];
    if (typeof type !== 'string' || !SUBSCRIPTION_TYPES.has(type)) {
      return {
        code: JSONRPC_ERROR.INVALID_PARAMS,
        message: `invalid params: subscription type must be one of newHeads, logs, newPendingTransactions`,
      };
    }
    if (
      type === 'logs' &&
      call.params[1] !== undefined &&
      (call.params[1] === null || typeof call.params[1] !== 'object')
    ) {
      return {
        code: JSONRPC_ERROR.INVALID_PARAMS,
        message: 'invalid params: logs subscription takes a filter object {address?, topics?}',
      };
    }
    if (connectionCount >= this.options.maxSubscriptionsPerConnection) {
      return {
        code: JSONRPC_ERROR.LIMIT_EXCEEDED,
        message: `limit exceeded: at most ${this.options.maxSubscriptionsPerConnection} subscriptions per connection`,
      };
    }
    return undefined;
  }
}

function refuse(socket: Duplex, status: number, body: string): void {
  const reason =
    { 401: 'Unauthorized', 402: 'Payment Required', 404: 'Not Found', 503: 'Service Unavailable' }[
      status
    ] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
