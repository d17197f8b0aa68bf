import { status as GrpcStatus, type ServerUnaryCall } from '@grpc/grpc-js';
import { bor } from '@meridian/contracts';
import {
  grpcService,
  startGrpcServer,
  toGrpcStatus,
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
    // `code` is what the client got (`clientGotStatus`): a call over before our answer is
    // CANCELLED (or DEADLINE_EXCEEDED), whatever its calls came to (QA).
    onOutcome: (method, code, failure, seconds, call) => {
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
      if (failure && toGrpcStatus(failure.error).code === GrpcStatus.INTERNAL)
        options.logger.error(
          { err: failure.error, request_id: failure.requestId, method: method.name },
          'gRPC call failed',
        );
    },
  });
}

/**
 * Each call's abandon switch: aborted when grpc-js ends the call before our answer, its client
 * having cancelled it (RST_STREAM, `call.cancelled`, the 'cancelled' event) or its deadline
 * passed (grpc-js answers DEADLINE_EXCEEDED itself, then cancels), so the relay sends none of
 * the call's calls still unsent (ADR 0203 amendment "a cancelled gRPC call"). grpc-js also says
 * 'cancelled' after every answer it sent: by then the outcome is logged and the relay is done.
 */
function abandonedOf(call: ServerUnaryCall<unknown, unknown>): AbortSignal {
  const controller = new AbortController();
  if (call.cancelled) controller.abort();
  else call.once('cancelled', () => controller.abort());
  return controller.signal;
}
