import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { ModuleRef, NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { enterRequest, PinoNestLogger } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { exitOnAddressInUse, refuseAddressInUse } from './address-in-use';
import { DomainErrorFilter, httpAnswerOf, type DbOutageReporter } from './domain-error.filter';
import { DbJobGate } from '@meridian/platform-db';
import { allowedMethodsOf, MethodNotAllowedError } from './method-not-allowed';
import { DEFAULT_BODY_LIMIT_BYTES } from './openapi/openapi-document';
import { requestIdOf } from './request-id';
import { RequestTelemetry } from './request-telemetry';
import { parseJsonBody, refuseNulInUrl, utf8Text } from './request-text';

export interface HttpAppOptions {
  logger: Logger;
  /** Largest accepted request body; COMPAT: about 5 MiB. */
  bodyLimitBytes?: number;
  /**
   * Which proxies' X-Forwarded-For to believe for `request.ip` (fastify's `trustProxy`: a hop
   * count, or addresses and CIDRs). Unset: none, `request.ip` is the peer's address.
   */
  trustProxy?: number | string;
  /**
   * `http_server_requests_total` and `http_server_request_duration_seconds` on the app's
   * Registry (ObservabilityModule), by method, route template and status; on by default. The
   * gateway turns it off: its relay route counts its own requests, without a per-request hook.
   */
  requestMetrics?: boolean;
  /**
   * One info line per request ("request": method, route template, status, ms, request id); on
   * by default, `REQUEST_LOGS` in the apps.
   */
  accessLog?: boolean;
  /**
   * Longest a request may take to arrive, head and body (node's `requestTimeout`; fastify's
   * default is none, so a client sending a body a byte at a time held its connection for ever:
   * QA, many such held every file descriptor). Past it: 408 `request_timeout`, then close.
   */
  requestTimeoutMs?: number;
  /**
   * Other ports the app binds during its init (its gRPC server's GRPC_PORT), asked with
   * HTTP_PORT before the init, so a taken one stops the app before its consumers start.
   */
  initListens?: ReadonlyArray<{ setting: string; port: number; host?: string }>;
}

/** A request must have arrived whole within this (COMPAT: 5 MiB at ~175 KB/s or better). */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Node's default time for a request's head to arrive, kept when the request timeout allows. */
const HEADERS_TIMEOUT_MAX_MS = 60_000;
/** How often node looks for requests past their time (its default, 30 s, at most). */
const TIMEOUT_CHECK_MAX_MS = 30_000;

/** One route as the router knows it, e.g. `{method: 'POST', url: '/api/v1/access-tokens/:id/roll'}`. */
export interface HttpRoute {
  method: string;
  url: string;
}

/**
 * Every app's HTTP edge: fastify, JSON logs, X-Request-Id in and out, DomainError → HTTP, and
 * every answer the framework makes by itself (malformed URL, bad JSON, wrong media type, body too
 * large, unknown route; 405 with Allow for a route's path with another method) in the same
 * body `{"error", "message", "request_id"}`. Bodies are JSON only. The routes are logged once at
 * start ("http routes"), which also lets the fuzz suite and the authorization matrix find every
 * route of a running process. Call `listen` on the result.
 */
export async function createHttpApp(
  module: Type<unknown> | DynamicModule,
  options: HttpAppOptions,
): Promise<NestFastifyApplication> {
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const adapter = new FastifyAdapter({
    bodyLimit: bodyLimitBytes,
    requestTimeout: requestTimeoutMs,
    http: {
      // Node checks the request timeout only with a head timeout no longer than it.
      headersTimeout: Math.min(HEADERS_TIMEOUT_MAX_MS, requestTimeoutMs),
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MAX_MS, Math.ceil(requestTimeoutMs / 2)),
    },
    ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
    genReqId: requestIdOf,
    requestIdHeader: false,
    // Errors fastify answers before any route or hook runs (a URL that does not decode).
    clientErrorHandler: answerClientError,
    frameworkErrors: (
      error: unknown,
      request: { id: unknown; method: string; raw: IncomingMessage },
      reply: FrameworkReply,
    ) => {
      const requestId = String(request.id);
      const { status, body, headers } = httpAnswerOf(error, bodyLimitBytes);
      // Answered past fastify's hooks (hijacked), so past onResponse below: recorded here.
      telemetry?.record({
        method: request.method,
        route: undefined,
        status,
        durationMs: reply.elapsedTime,
        requestId,
      });
      const payload = JSON.stringify({ ...body, request_id: requestId });
      reply.hijack();
      // Written past the onSend hook below (a 414 for a path parameter too long): the same rule.
      if (!request.raw.complete) reply.raw.shouldKeepAlive = true;
      reply.raw.writeHead(status, {
        ...headers,
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(payload),
        'x-request-id': requestId,
      });
      reply.raw.end(payload);
    },
  });
  const fastify = adapter.getInstance();
  boundPipelining(fastify.server, MAX_REQUESTS_AWAITING_ANSWERS);
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser(
    /^application\/(?:[\w.-]+\+)?json\b/i,
    { parseAs: 'buffer' },
    async (_request: unknown, body: Buffer) => parseJsonBody(utf8Text(body)),
  );
  // First hook of every request (added before Nest's): the request id becomes the current one
  // for all this request's work, so the process guard can name it (installProcessGuard).
  fastify.addHook('onRequest', async (request, reply) => {
    enterRequest(request.id as string);
    void reply.header('X-Request-Id', request.id);
    refuseNulInUrl(request.url);
    // No route for this method: 405 with Allow when the path is a route under other methods
    // (RFC 9110 §15.5.6), asked of the router itself; an unknown path goes on to the 404.
    if (request.is404) {
      const allow = allowedMethodsOf(fastify, methods, request.url);
      if (allow.length > 0) throw new MethodNotAllowedError(request.method, allow);
    }
  });
  // An answer sent before the body was read (404, 413, 415…): closing the connection with the
  // body's bytes still arriving makes the kernel reset it, and the client can lose the answer.
  // Keeping it lets node read and drop the rest of the body. fastify itself asks for
  // `Connection: close` on every body-parser error (a 413 from content-length among them), and
  // an explicit header beats shouldKeepAlive: that header goes too (the ADR 0501 finding).
  fastify.addHook('onSend', async (request, reply) => {
    if (request.raw.complete) return;
    reply.raw.shouldKeepAlive = true;
    void reply.removeHeader('connection');
  });
  const routes: HttpRoute[] = [];
  /** Every method some route registered (HEAD too): the methods the 405 rule asks the router. */
  const methods = new Set<string>();
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      methods.add(method);
      if (method !== 'HEAD') routes.push({ method, url: route.url });
    }
  });
  fastify.addHook('onReady', async () => {
    options.logger.info({ routes }, 'http routes');
  });
  // Request metrics and the access log, in a fastify hook rather than a Nest interceptor: an
  // interceptor runs only once a route matched and its guards passed, so it never sees a 404, a
  // 401 from a guard, nor a 400/413/415 from the body parser; onResponse sees every answer
  // fastify sends (the frameworkErrors answers above, written past it, record themselves).
  let telemetry: RequestTelemetry | undefined;
  if (options.requestMetrics !== false || options.accessLog !== false) {
    // A callback hook, not an async one: no promise per request (the request context's promise
    // hooks would run for it).
    fastify.addHook('onResponse', (request, reply, done) => {
      telemetry?.record({
        method: request.method,
        route: request.is404 ? undefined : request.routeOptions.url,
        status: reply.statusCode,
        durationMs: reply.elapsedTime,
        requestId: String(request.id),
      });
      done();
    });
  }
  const app = await NestFactory.create<NestFastifyApplication>(module, adapter, {
    logger: new PinoNestLogger(options.logger),
    bufferLogs: false,
    // Ours (above) instead of Nest's, which refuses an empty body sent as application/json.
    bodyParser: false,
  });
  if (options.requestMetrics !== false || options.accessLog !== false) {
    telemetry = new RequestTelemetry({
      ...(options.requestMetrics !== false ? { registry: registryOf(app) } : {}),
      ...(options.accessLog !== false ? { logger: options.logger } : {}),
    });
  }
  app.useGlobalFilters(new DomainErrorFilter(options.logger, databaseGateOf(app), bodyLimitBytes));
  app.enableShutdownHooks();
  exitWhenPortInUse(app, options.logger, options.initListens ?? []);
  return app;
}

/**
 * Every app's `listen(HTTP_PORT, HTTP_HOST)`: a port in use is one fatal line naming HTTP_PORT
 * (or GRPC_PORT, from a gRPC server the app starts at init) and exit 1, never node's, Nest's and
 * grpc-js's stack traces (QA). HTTP_PORT and the `initListens` are asked before the app's init,
 * so a taken one stops the app before its consumers start; GRPC_PORT is asked again when its
 * server starts (a port taken in between is named the same way).
 */
function exitWhenPortInUse(
  app: NestFastifyApplication,
  logger: Logger,
  initListens: NonNullable<HttpAppOptions['initListens']>,
): void {
  type Listen = (this: unknown, port: number | string, ...args: unknown[]) => Promise<unknown>;
  const { listen } = Object.getPrototypeOf(app) as { listen: Listen };
  // A function, not an arrow: NestFactory's proxies call it on the application itself (`this`),
  // whose own listen must run there too (a write through the proxy is refused).
  async function guarded(this: unknown, port: number | string, ...args: unknown[]) {
    const host = typeof args[0] === 'string' ? args[0] : undefined;
    for (const other of initListens)
      try {
        await refuseAddressInUse(other.setting, other.port, other.host);
      } catch (error) {
        return exitOnAddressInUse(error, logger, other.setting, other.port, other.host);
      }
    try {
      await refuseAddressInUse('HTTP_PORT', Number(port), host);
      return await listen.call(this, port, ...args);
    } catch (error) {
      return exitOnAddressInUse(error, logger, 'HTTP_PORT', Number(port), host);
    }
  }
  // Defined, not assigned: the proxy's `set` trap drops assignments.
  Object.defineProperty(app, 'listen', { value: guarded, configurable: true, writable: true });
}

/**
 * Bytes node's HTTP parser could not read as a request (a body sent without framing, a header
 * block too large, a request too slow): answered in our error body before the connection closes,
 * instead of fastify's `{"error":"Bad Request","message":"Client Error"}`.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // Answered already: the parser reports the bytes still arriving after its error again.
  if (socket.writableEnded) return;
  const [status, code, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'the request headers are too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'the request took too long to arrive']
        : [400, 'malformed_request', 'the bytes received are not a valid HTTP request'];
  const requestId = randomUUID();
  const body = JSON.stringify({ error: code, message, request_id: requestId });
  if (!socket.writable) {
    socket.destroy(error);
    return;
  }
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
  // Lingering close (nginx's lingering_close): the answer goes with a FIN, and what the client
  // still sends (the rest of an oversized head, a body) is read and dropped for a while. Closing
  // with those bytes unread makes the kernel reset the connection, and a reset can discard the
  // answer before the client has read it (the fuzz suite's "closed with no bytes").
  socket.on('data', () => undefined);
  socket.resume();
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}

/**
 * How many requests one connection may have waiting for their answers to be written (HTTP/1.1
 * pipelining). Browsers and HTTP client libraries send one at a time (undici's default
 * pipelining is 1); past this the connection is closed.
 */
export const MAX_REQUESTS_AWAITING_ANSWERS = 32;

/**
 * Node hands every request of a pipelined burst to the app at once, and keeps every answer in
 * memory until the client reads the ones before it. QA RR: 500 connections each sending a
 * `GET /openapi.json` every 50 ms and never reading took billing-ledger past its heap limit
 * (killed, restarted; 1.2 GB to 4 GB), no credentials needed. So a connection with `max`
 * requests whose answers are not yet written (handed to the kernel) is closed, and the requests
 * past it are not handled: the app's work and memory per connection are bounded by `max`
 * answers. The request listeners already attached (fastify's) run only for requests within it.
 */
function boundPipelining(server: Server, max: number): void {
  const listeners = server.listeners('request') as ((
    req: IncomingMessage,
    res: ServerResponse,
  ) => void)[];
  server.removeAllListeners('request');
  const awaiting = new WeakMap<Socket, number>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    if (socket.destroyed) return;
    const count = (awaiting.get(socket) ?? 0) + 1;
    if (count > max) {
      socket.destroy();
      return;
    }
    awaiting.set(socket, count);
    // 'finish': the answer is handed to the kernel; 'close' also comes for one never finished.
    res.once('close', () => awaiting.set(socket, (awaiting.get(socket) ?? 1) - 1));
    for (const listener of listeners) listener.call(server, req, res);
  });
}

/** How long a connection answered for bytes that are no request keeps reading before it closes. */
const LINGER_MS = 2_000;

/**
 * What the framework-error handler needs of fastify's reply: the node response, written directly
 * (fastify's own reply types are generic beyond what a plain function can match).
 */
interface FrameworkReply {
  hijack(): void;
  raw: ServerResponse;
  /** Milliseconds since the request arrived. */
  readonly elapsedTime: number;
}

/** The app's metrics registry (ObservabilityModule's), or none in a module without it. */
function registryOf(app: INestApplication): Registry | undefined {
  try {
    // Through ModuleRef: the app's own `get` ends the process when the token is unknown.
    return app.get(ModuleRef).get(Registry, { strict: false });
  } catch {
    return undefined;
  }
}

export type HttpApp = INestApplication;

/**
 * The app's DbJobGate (DbModule provides it) for the error filter, looked up at the first
 * database outage of a request; undefined in an app without Postgres.
 */
function databaseGateOf(app: NestFastifyApplication): DbOutageReporter {
  let gate: DbJobGate | null | undefined;
  return () => {
    if (gate === undefined) {
      try {
        // Through ModuleRef, as registryOf: the app's own `get` ends the process when the token
        // is unknown (the gateway has no Postgres: a client cutting a body short crashed it).
        gate = app.get(ModuleRef).get(DbJobGate, { strict: false });
      } catch {
        gate = null;
      }
    }
    return gate ?? undefined;
  };
}
