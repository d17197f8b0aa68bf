import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { DomainError } from '@meridian/errors';
import { jsonRpcErrorOf, NULL_ID, serializeErrorObject } from '@meridian/jsonrpc';
import { requestIdOf } from '@meridian/platform-http';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import type { LoggedAnswer, RequestLog } from '../observability/request-log';
import {
  acceptsGzip,
  decodeBody,
  GZIP_MIN_BYTES,
  gzipped,
  REQUEST_CODINGS,
  UNSUPPORTED_CONTENT_ENCODING,
} from './content-coding';
import { bodyTooLarge, gatewayHttpStatusOf, retryAfterSecondsOf } from './gateway-errors';
import type { RelayService } from './relay.service';
import { TOKEN_PATH, tokenOf } from './token-path';

/**
 * CORS of the JSON-RPC endpoint: any origin may call it (a dApp's page calls it from the browser;
 * the token in the path is the credential, no cookies are read, so `*` and no credentials), as
 * the commercial node providers allow. Constants: the answer's header list gets two more entries,
 * nothing is built per request (ADR 0201, 0207).
 */
const CORS_ORIGIN = 'access-control-allow-origin';
const CORS_ANY = '*';
const CORS_EXPOSE = 'access-control-expose-headers';
/** What a page's script may read of an answer besides the simple headers. */
const CORS_EXPOSED = 'x-request-id, retry-after, deprecation';
/**
 * RFC 9745's `Deprecation` field, on an answer to a request that calls a deprecated method
 * (`DEPRECATED_METHODS`, @meridian/networks). Its value must be a date (a Structured Field Date,
 * `@` and Unix seconds; the drafts' `true` is gone). The spec names none, so this is the day the
 * spec declaring them reached this service, 2026-11-21 00:00 UTC: in the past, which says "is
 * deprecated" (RFC 9745 §2.1). No `Sunset` (RFC 8594): the removal date is not known either.
 * README "Deprecated methods".
 */
const DEPRECATION = 'deprecation';
const DEPRECATION_DATE = '@1795219200';
/** How long a browser may reuse a preflight (browsers cap it: Chromium 2 h, Firefox 24 h). */
const PREFLIGHT_MAX_AGE_SECONDS = 86_400;
/** Requested header names echoed back: a comma list of tokens, bounded. */
const REQUESTED_HEADERS = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(?:\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/;
const MAX_REQUESTED_HEADERS_CHARS = 1_024;

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
    body: string | Buffer,
    retryAfterSeconds?: number,
    gzip?: boolean,
    acceptEncoding?: string,
    deprecated?: boolean,
  ) => {
    // A flat [name, value, …] list: node:http takes it as is, without building a header object.
    const headers: (string | number)[] = [
      'content-type',
      'application/json',
      'content-length',
      Buffer.byteLength(body),
      'x-request-id',
      requestId,
      CORS_ORIGIN,
      CORS_ANY,
      CORS_EXPOSE,
      CORS_EXPOSED,
    ];
    if (retryAfterSeconds !== undefined) headers.push('retry-after', retryAfterSeconds);
    if (gzip) headers.push('content-encoding', 'gzip', 'vary', 'accept-encoding');
    if (acceptEncoding !== undefined) headers.push('accept-encoding', acceptEncoding);
    if (deprecated === true) headers.push(DEPRECATION, DEPRECATION_DATE);
    res.writeHead(status, headers);
    res.end(body);
  };

  /** A relayed answer: gzipped when large and the client admits it (content-coding.ts). */
  const answerRelayed = (
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    body: string,
    deprecated: boolean,
  ) => {
    if (body.length < GZIP_MIN_BYTES || !acceptsGzip(req.headers['accept-encoding']))
      return answer(res, requestId, 200, body, undefined, false, undefined, deprecated);
    void gzipped(body).then((zipped) =>
      zipped === undefined
        ? answer(res, requestId, 200, body, undefined, false, undefined, deprecated)
        : answer(res, requestId, 200, zipped, undefined, true, undefined, deprecated),
    );
  };

  const closing = options.closing ?? (() => false);
  const tooLargeError = bodyTooLarge(options.bodyLimitBytes);
  // A body not read (too large, not decoded) has no id to echo: id null (JSON-RPC 2.0 §5).
  const tooLargeBody = unreadRefusal(tooLargeError);

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
        const status = refuse(res, requestId, tooLargeError, tooLargeBody);
        requestsOf(status).inc();
        logUnread(rawToken, requestId, status, started);
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', () => undefined);
    req.on('end', () => {
      if (tooLarge) return;
      const coding = req.headers['content-encoding'];
      if (coding === undefined)
        return relayHttp(
          req,
          res,
          rawToken,
          requestId,
          started,
          chunks.length === 1
            ? chunks[0]!.toString('utf8')
            : Buffer.concat(chunks).toString('utf8'),
        );
      void decodeBody(coding, Buffer.concat(chunks), options.bodyLimitBytes).then((decoded) => {
        if (typeof decoded === 'object') {
          const status = refuse(res, requestId, decoded, unreadRefusal(decoded));
          requestsOf(status).inc();
          logUnread(rawToken, requestId, status, started);
          return;
        }
        // A body that does not decode is a malformed body: -32700 once its token is checked.
        relayHttp(req, res, rawToken, requestId, started, decoded ?? '');
      });
    });
  };

  /**
   * The request line of a request refused before its body was read (413, 415): every refused
   * request leaves its line (README "Request log"). No calls were read (0); the network and
   * account are the token's when it names a known one, as a 404's are, looked up for the line
   * only after the answer went out (and not at all with the request log off).
   */
  const logUnread = (rawToken: string, requestId: string, status: number, started: number) => {
    if (!requestLog.enabled) return;
    const seconds = (performance.now() - started) / 1000;
    void relay
      .unreadRequest(tokenOf(rawToken))
      .catch(() => UNREAD_UNKNOWN)
      .then((answer) => requestLog.http(requestId, status, answer, seconds));
  };

  const relayHttp = (
    req: IncomingMessage,
    res: ServerResponse,
    rawToken: string,
    requestId: string,
    started: number,
    body: string,
  ) =>
    relay.handleHttp(tokenOf(rawToken), body).then(
      (out) => {
        // A stop that began while the call was relayed closes its connection too: left open,
        // an idle keep-alive connection held the stop off until HTTP_DRAIN_MS (CI, 10 s).
        if (closing()) res.shouldKeepAlive = false;
        const status =
          out.refused === undefined
            ? 200
            : refuse(res, requestId, out.refused, out.body, out.deprecated);
        if (status === 200) answerRelayed(req, res, requestId, out.body, out.deprecated);
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

  /**
   * The one place a request-level DomainError becomes an HTTP answer on this edge: its status,
   * and `body`, its JSON-RPC answer (under the request's ids: `RelayService.refusal`). A 415 for
   * an unsupported Content-Encoding lists the codings the edge reads (RFC 9110 §12.5.3).
   */
  const refuse = (
    res: ServerResponse,
    requestId: string,
    error: DomainError,
    body: string,
    deprecated?: boolean,
  ): number => {
    const status = gatewayHttpStatusOf(error);
    answer(
      res,
      requestId,
      status,
      body,
      retryAfterSecondsOf(error),
      false,
      error === UNSUPPORTED_CONTENT_ENCODING ? REQUEST_CODINGS : undefined,
      deprecated,
    );
    return status;
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (closing()) res.shouldKeepAlive = false;
    if (req.method === 'POST') {
      const match = TOKEN_PATH.exec(req.url ?? '');
      if (match !== null) return hot(req, res, match[1]!);
    } else if (req.method === 'OPTIONS' && TOKEN_PATH.test(req.url ?? '')) {
      requestsOf(204).inc();
      return preflight(req, res);
    }
    for (const fallback of fallbacks) fallback.call(server, req, res);
  });
}

/** The request line's fields of an unread request whose token could not be looked up. */
const UNREAD_UNKNOWN: LoggedAnswer = { calls: 0, billedCalls: 0, cu: 0 };

/** The JSON-RPC answer to a refusal made before the body could be read: id null. */
function unreadRefusal(error: DomainError): string {
  return serializeErrorObject(NULL_ID, jsonRpcErrorOf(error));
}

/**
 * A browser's CORS preflight for the JSON-RPC endpoint: 204, any origin, POST (the endpoint has
 * no GET form), the headers the page asked for (or content-type). No token lookup: a preflight
 * carries no credential, and the POST that follows is checked as any other.
 */
function preflight(req: IncomingMessage, res: ServerResponse): void {
  const asked = req.headers['access-control-request-headers'];
  const allowHeaders =
    typeof asked === 'string' &&
    asked.length <= MAX_REQUESTED_HEADERS_CHARS &&
    REQUESTED_HEADERS.test(asked)
      ? asked
      : 'content-type';
  res.writeHead(204, [
    CORS_ORIGIN,
    CORS_ANY,
    'access-control-allow-methods',
    'POST, OPTIONS',
    'access-control-allow-headers',
    allowHeaders,
    'access-control-max-age',
    PREFLIGHT_MAX_AGE_SECONDS,
    'vary',
    'access-control-request-headers',
    'x-request-id',
    requestIdOf(req),
  ]);
  res.end();
  // The body of an OPTIONS request, if any, is not read.
  req.resume();
}
