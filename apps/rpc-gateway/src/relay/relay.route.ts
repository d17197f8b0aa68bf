import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { DomainError } from '@meridian/errors';
import { jsonRpcErrorOf, serializeErrorObject } from '@meridian/jsonrpc';
import { requestIdOf } from '@meridian/platform-http';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import type { RequestLog } from '../observability/request-log';
import { bodyTooLarge, gatewayHttpStatusOf, retryAfterSecondsOf } from './gateway-errors';
import type { RelayService } from './relay.service';
import { TOKEN_PATH, tokenOf } from './token-path';

export interface HotPathOptions {
  /**
   * Larger bodies get 413 (COMPAT: about 5 MiB), like the HTTP edge's body limit, with a JSON-RPC
   * error object (-32005, id null) like every other refusal of this edge.
   */
  bodyLimitBytes: number;
  /**
   * True once the gateway is stopping: every answer then closes its connection (asked when the
   * request arrives and again when a relayed call is answered), so a client keeping a
   * connection busy cannot hold the shutdown (and its last usage flush) off.
   */
  closing?: () => boolean;
}

/**
 * `POST /<token>` and `POST /<token>/` answered straight from node:http on the server Nest
 * listens on (ADR 0201): the request listener of fastify is wrapped, so every other method and
 * path (health, readiness, metrics, the 404 JSON of the HTTP edge) still goes through Nest.
 * Measured: Nest's fastify chain (middie, hooks, the async content-type parser) cost more CPU
 * per call than the whole relay (bench/README "gateway").
 */
export function attachHotPath(
  server: Server,
  relay: RelayService,
  metrics: GatewayMetrics,
  requestLog: RequestLog,
  logger: Logger,
  options: HotPathOptions,
): void {
  const fallbacks = server.listeners('request') as ((
    req: IncomingMessage,
    res: ServerResponse,
  ) => void)[];
  server.removeAllListeners('request');
  const httpDuration = metrics.requestDuration.labels('http');
  const byStatus = new Map<number, { inc(): void }>();
  const requestsOf = (status: number) => {
    let counter = byStatus.get(status);
    if (counter === undefined) {
      counter = metrics.requests.labels('http', String(status));
      byStatus.set(status, counter);
    }
    return counter;
  };

  const answer = (
    res: ServerResponse,
    requestId: string,
    status: number,
    body: string,
    retryAfterSeconds?: number,
  ) => {
    // A flat [name, value, …] list: node:http takes it as is, without building a header object.
    const headers: (string | number)[] = [
      'content-type',
      'application/json',
      'content-length',
      Buffer.byteLength(body),
      'x-request-id',
      requestId,
    ];
    if (retryAfterSeconds !== undefined) headers.push('retry-after', retryAfterSeconds);
    res.writeHead(status, headers);
    res.end(body);
  };

  const closing = options.closing ?? (() => false);
  const tooLargeError = bodyTooLarge(options.bodyLimitBytes);

  const hot = (req: IncomingMessage, res: ServerResponse, rawToken: string) => {
    const started = performance.now();
    const requestId = requestIdOf(req);
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > options.bodyLimitBytes) {
        tooLarge = true;
        chunks.length = 0;
        // Answered with the body still arriving: closing now would make the kernel reset the
        // connection and lose the 413, so the rest is read and dropped (as platform-http does).
        res.shouldKeepAlive = true;
        requestsOf(refuse(res, requestId, tooLargeError, 'null')).inc();
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', () => undefined);
    req.on('end', () => {
      if (tooLarge) return;
      const body =
        chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
      relay.handleHttp(tokenOf(rawToken), body).then(
        (out) => {
          // A stop that began while the call was relayed closes its connection too: left open,
          // an idle keep-alive connection held the stop off until HTTP_DRAIN_MS (CI, 10 s).
          if (closing()) res.shouldKeepAlive = false;
          const status =
            out.refused === undefined ? 200 : refuse(res, requestId, out.refused, out.refusedId);
          if (status === 200) answer(res, requestId, 200, out.body);
          const seconds = (performance.now() - started) / 1000;
          requestsOf(status).inc();
          httpDuration.observe(seconds);
          requestLog.http(requestId, status, out, seconds);
        },
        (error: unknown) => {
          if (closing()) res.shouldKeepAlive = false;
          logger.error({ err: error, request_id: requestId }, 'request failed');
          answer(
            res,
            requestId,
            500,
            JSON.stringify({ error: 'internal', message: 'internal error', request_id: requestId }),
          );
          requestsOf(500).inc();
        },
      );
    });
  };

  /** The one place a request-level DomainError becomes an HTTP answer on this edge. */
  const refuse = (
    res: ServerResponse,
    requestId: string,
    error: DomainError,
    idRaw: string,
  ): number => {
    const status = gatewayHttpStatusOf(error);
    answer(
      res,
      requestId,
      status,
      serializeErrorObject(idRaw, jsonRpcErrorOf(error)),
      retryAfterSecondsOf(error),
    );
    return status;
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (closing()) res.shouldKeepAlive = false;
    if (req.method === 'POST') {
      const match = TOKEN_PATH.exec(req.url ?? '');
      if (match !== null) return hot(req, res, match[1]!);
    }
    for (const fallback of fallbacks) fallback.call(server, req, res);
  });
}
