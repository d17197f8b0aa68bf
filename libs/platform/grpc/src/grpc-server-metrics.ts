import type { DescMethod } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { Counter, Histogram, type Registry } from 'prom-client';

type Labels = 'grpc_service' | 'grpc_method' | 'grpc_code';

/**
 * Latency buckets (seconds) of an internal gRPC server: a credential or balance lookup answers in
 * milliseconds from Postgres; 0.1 s and 0.25 s are bounds so an alert's threshold reads exactly.
 */
export const GRPC_DURATION_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/**
 * `grpc_server_handled_total` and `grpc_server_handling_seconds` of every unary call a server of
 * this lib answers (startGrpcServer's `registry`), by service (`billing.v1.BillingService`),
 * method (`ResolveAccessToken`) and status code as grpc-js names it (`OK`, `INTERNAL`, the
 * gateway's `rpc_gateway_grpc_calls_total` spelling). The names are go-grpc-prometheus's and so
 * are the `grpc_` label names: `service` is the app's own label on every series of its registry.
 * All three labels come from the proto and the status enum: a bounded set.
 */
export class GrpcServerMetrics {
  private readonly handled: Counter<Labels>;
  private readonly handling: Histogram<Labels>;
  /** Label children by key: prom-client hashes the label object on every labelled call. */
  private readonly children = new Map<string, (seconds: number) => void>();

  constructor(registry: Registry) {
    const registers = [registry];
    // One registry may see a second server (a test starting two): the same series then.
    this.handled =
      (registry.getSingleMetric('grpc_server_handled_total') as Counter<Labels> | undefined) ??
      new Counter({
        name: 'grpc_server_handled_total',
        help: 'gRPC calls answered by the server, by service, method and status code',
        labelNames: ['grpc_service', 'grpc_method', 'grpc_code'],
        registers,
      });
    this.handling =
      (registry.getSingleMetric('grpc_server_handling_seconds') as Histogram<Labels> | undefined) ??
      new Histogram({
        name: 'grpc_server_handling_seconds',
        help: 'Time from a decoded gRPC request to its answer, by service, method and status code',
        labelNames: ['grpc_service', 'grpc_method', 'grpc_code'],
        buckets: GRPC_DURATION_BUCKETS,
        registers,
      });
  }

  record(method: DescMethod, code: GrpcStatus, seconds: number): void {
    const key = `${method.parent.typeName}/${method.name}/${code}`;
    let observe = this.children.get(key);
    if (observe === undefined) {
      const labels = [method.parent.typeName, method.name, GrpcStatus[code] ?? String(code)];
      const counter = this.handled.labels(...labels);
      const histogram = this.handling.labels(...labels);
      observe = (s) => {
        counter.inc();
        histogram.observe(s);
      };
      this.children.set(key, observe);
    }
    observe(seconds);
  }
}
