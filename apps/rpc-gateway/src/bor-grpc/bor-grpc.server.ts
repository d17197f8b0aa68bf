import { status as GrpcStatus, type Metadata, type ServerUnaryCall } from '@grpc/grpc-js';
import { bor } from '@meridian/contracts';
import {
  grpcService,
  startGrpcServer,
  type GrpcServiceImplementation,
  type GrpcTls,
  type RunningGrpcServer,
} from '@meridian/platform-grpc';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { RequestLog } from '../observability/request-log';
import type { BorApiService } from './bor-api.service';

/** Largest BorApi request accepted (the largest real one is under 100 bytes). */
export const MAX_REQUEST_BYTES = 16 * 1024;

/**
 * The BorApi gRPC server (package `bor`, service `BorApi`, wire-compatible with Polygon Bor)
 * with server reflection, on the shared gRPC server of @meridian/platform-grpc. Thin edge:
 * decode, call BorApiService; errors map once (DomainError kind → status, toGrpcStatus).
 */
export async function startBorGrpc(
  service: BorApiService,
  options: {
    host: string;
    port: number;
    logger: Logger;
    /** One line per call, as HTTP's (REQUEST_LOGS): request-log.ts. */
    requestLog?: RequestLog;
    /** Where its certificate's end of validity goes (grpc_tls_certificate_not_after_seconds). */
    registry?: Registry;
    /** TLS of the public server (a certificate and key; no client certificates). */
    tls?: GrpcTls;
  },
): Promise<RunningGrpcServer> {
  // Each call's abandon switch, by its metadata (one object per call): thrown when grpc-js says
  // the call is over without our answer (its client cancelled it, its deadline passed).
  const ends = new WeakMap<Metadata, CallEnd>();
  const abandonedOf = (c: ServerUnaryCall<unknown, unknown>): AbortSignal => {
    const end = new CallEnd(c);
    ends.set(c.metadata, end);
    return end.signal;
  };
  const implementation: Partial<GrpcServiceImplementation<typeof bor.BorApi.method>> = {
    headerByNumber: (r, c) => service.headerByNumber(r.number, c.metadata, abandonedOf(c)),
    blockByNumber: (r, c) => service.blockByNumber(r.number, c.metadata, abandonedOf(c)),
    transactionReceipt: (r, c) => service.transactionReceipt(r.hash, c.metadata, abandonedOf(c)),
    borBlockReceipt: (r, c) => service.borBlockReceipt(r.hash, c.metadata, abandonedOf(c)),
    getRootHash: (r, c) =>
      service.getRootHash(r.startBlockNumber, r.endBlockNumber, c.metadata, abandonedOf(c)),
    getVoteOnHash: (r, c) => service.getVoteOnHash(r, c.metadata, abandonedOf(c)),
    getStartBlockHeimdallSpanID: (r, c) =>
      service.getStartBlockHeimdallSpanID(r.StartBlock, c.metadata, abandonedOf(c)),
    getAuthor: (r, c) => service.getAuthor(r.number, c.metadata, abandonedOf(c)),
    getTdByHash: (r, c) => service.getTdByHash(r.hash, c.metadata, abandonedOf(c)),
    getTdByNumber: (r, c) => service.getTdByNumber(r.number, c.metadata, abandonedOf(c)),
    getBlockInfoInBatch: (r, c) =>
      service.getBlockInfoInBatch(r.startBlockNumber, r.endBlockNumber, c.metadata, abandonedOf(c)),
  };
  return startGrpcServer({
    host: options.host,
    port: options.port,
    services: [grpcService(bor.BorApi, implementation)],
    // A renewed certificate is served without a restart; a broken one is refused (ADR 0506).
    tls: options.tls && {
      certFile: options.tls.certFile,
      keyFile: options.tls.keyFile,
      refreshIntervalMs: options.tls.refreshIntervalMs,
      // grpc_tls_certificate_not_after_seconds{tls="bor",role="server"}.
      report: { tls: 'bor', logger: options.logger, registry: options.registry },
    },
    // Every BorApi request is a few numbers or a hash; grpc-js answers RESOURCE_EXHAUSTED above.
    channelOptions: { 'grpc.max_receive_message_length': MAX_REQUEST_BYTES },
    onOutcome: (method, answered, failure, seconds, call) => {
      // What the client got: a call over before our answer is CANCELLED (or DEADLINE_EXCEEDED),
      // whatever its calls came to; never OK for an answer nobody received (QA).
      const code = ends.get(call.metadata)?.code() ?? answered;
      options.requestLog?.grpc(
        call.requestId,
        `${method.parent.typeName}/${method.name}`,
        code,
        service.usageOf(call.metadata),
        seconds,
      );
      service.metrics.grpcCalls.inc({
        method: method.name,
        code: GrpcStatus[code] ?? String(code),
      });
      // Our own failure (not a refusal): logged with the call's id, as the relay route does
      // (no request context in the gateway, ADR 0210).
      if (failure && answered === GrpcStatus.INTERNAL)
        options.logger.error(
          { err: failure.error, request_id: failure.requestId, method: method.name },
          'gRPC call failed',
        );
    },
  });
}

/**
 * How a call ended when grpc-js ended it before our answer: its client cancelled it (RST_STREAM,
 * `call.cancelled`, the 'cancelled' event) or its deadline passed (grpc-js answers
 * DEADLINE_EXCEEDED itself, then cancels). `signal` aborts then, so the relay sends none of the
 * call's calls still unsent (ADR 0203 amendment "a cancelled gRPC call"). grpc-js also says
 * 'cancelled' after every answer it sent: by then the outcome is logged and the relay is done.
 */
class CallEnd {
  private readonly controller = new AbortController();

  constructor(private readonly call: ServerUnaryCall<unknown, unknown>) {
    if (call.cancelled) this.controller.abort();
    else call.once('cancelled', () => this.controller.abort());
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The status the client got, once grpc-js ended the call; undefined while it is ours. */
  code(): GrpcStatus | undefined {
    if (!this.controller.signal.aborted) return undefined;
    const deadline = this.call.getDeadline();
    const ms = deadline instanceof Date ? deadline.getTime() : deadline;
    return Number.isFinite(ms) && Date.now() >= ms
      ? GrpcStatus.DEADLINE_EXCEEDED
      : GrpcStatus.CANCELLED;
  }
}
