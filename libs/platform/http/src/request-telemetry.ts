import type { Logger } from 'pino';
import { Counter, Histogram, type Registry } from 'prom-client';

/** The route label of a request no route matched (404, a 405, a URL that did not decode). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Probe routes, left out of the request metrics and the access log: scrapes and kubelet probes
 * every few seconds would swamp a quiet API's rate, latency and 5xx ratio, and a /readyz 503 is
 * a readiness signal (the pod leaves the Service), not an API error.
 */
export const PROBE_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Latency buckets (seconds) of the REST APIs: their answers take milliseconds (a Postgres query)
 * to seconds (an audit reads chains through the gateway); 0.5 s, 1 s and 2.5 s are bucket
 * bounds so the latency alerts' thresholds are read exactly, not interpolated.
 */
export const HTTP_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One finished request as the edge saw it. `route` is the matched template or undefined. */
export interface FinishedRequest {
  method: string;
  route: string | undefined;
  status: number;
  durationMs: number;
  requestId: string;
}

export interface RequestTelemetryOptions {
  /** Where `http_server_*` register (the app's registry, served on /metrics); none: no metrics. */
  registry?: Registry;
  /**
   * The access log: one info line per request ("request"; the fields of the gateway's "rpc
   * request" lines where they mean the same: request_id, status, ms); none: no access log.
   */
  logger?: Logger;
}

/**
 * Per request of a REST app: `http_server_requests_total` and
 * `http_server_request_duration_seconds` by method, route template and status code, and one
 * access-log line. Labels hold the route's template (`/api/v1/webhooks/:id`), never the path, so
 * no id, token or query string reaches a label or the log line; the app is the registry's
 * default label `service`. The status is the code, not its class: the codes our edge answers are
 * a fixed, small set (httpAnswerOf), and 401 vs 429 vs 404 are different stories.
 */
export class RequestTelemetry {
  private readonly requests: Counter<'method' | 'route' | 'status'> | undefined;
  private readonly duration: Histogram<'method' | 'route' | 'status'> | undefined;
  /** Label children by key: prom-client hashes the label object on every labelled call. */
  private readonly children = new Map<
    string,
    { count: () => void; observe: (s: number) => void }
  >();

  constructor(private readonly options: RequestTelemetryOptions) {
    const registers = options.registry ? [options.registry] : undefined;
    if (!registers) return;
    this.requests = new Counter({
      name: 'http_server_requests_total',
      help: 'HTTP requests answered, by method, route template (unmatched: no route) and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'http_server_request_duration_seconds',
      help: 'Time from the request head to the answer sent, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_DURATION_BUCKETS,
      registers,
    });
  }

  record(request: FinishedRequest): void {
    const route = request.route ?? UNMATCHED_ROUTE;
    if (PROBE_ROUTES.has(route)) return;
    const status = String(request.status);
    if (this.requests && this.duration) {
      const key = `${request.method} ${route} ${status}`;
      let child = this.children.get(key);
      if (child === undefined) {
        const counter = this.requests.labels(request.method, route, status);
        const histogram = this.duration.labels(request.method, route, status);
        child = { count: () => counter.inc(), observe: (s) => histogram.observe(s) };
        this.children.set(key, child);
      }
      child.count();
      child.observe(request.durationMs / 1_000);
    }
    this.options.logger?.info(
      {
        method: request.method,
        route,
        status: request.status,
        ms: Math.round(request.durationMs * 10) / 10,
        request_id: request.requestId,
      },
      'request',
    );
  }
}
