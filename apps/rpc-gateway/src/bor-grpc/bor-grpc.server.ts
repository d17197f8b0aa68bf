import { status as GrpcStatus } from '@grpc/grpc-js';
import { bor } from '@meridian/contracts';
import {
  grpcService,
  startGrpcServer,
  type GrpcServiceImplementation,
  type RunningGrpcServer,
} from '@meridian/platform-grpc';
import type { BorApiService } from './bor-api.service';
import { fromH256 } from './bor-mapping';

/**
 * The BorApi gRPC server (package `bor`, service `BorApi`, wire-compatible with Polygon Bor)
 * with server reflection, on the shared gRPC server of @meridian/platform-grpc. Thin edge:
 * decode, call BorApiService; errors map once (DomainError kinds, or GrpcStatusError for
 * UNIMPLEMENTED / DEADLINE_EXCEEDED).
 */
export async function startBorGrpc(
  service: BorApiService,
  options: { host: string; port: number },
): Promise<RunningGrpcServer> {
  const implementation: Partial<GrpcServiceImplementation<typeof bor.BorApi.method>> = {
    headerByNumber: (r, c) => service.headerByNumber(r.number, c.metadata),
    blockByNumber: (r, c) => service.blockByNumber(r.number, c.metadata),
    transactionReceipt: (r, c) => service.transactionReceipt(fromH256(r.hash), c.metadata),
    borBlockReceipt: (r, c) => service.borBlockReceipt(fromH256(r.hash), c.metadata),
    getRootHash: (r, c) => service.getRootHash(r.startBlockNumber, r.endBlockNumber, c.metadata),
    getVoteOnHash: (r, c) => service.getVoteOnHash(r, c.metadata),
    getStartBlockHeimdallSpanID: (r, c) =>
      service.getStartBlockHeimdallSpanID(r.StartBlock, c.metadata),
    getAuthor: (r, c) => service.getAuthor(r.number, c.metadata),
    getTdByHash: (r, c) => service.getTdByHash(fromH256(r.hash), c.metadata),
    getTdByNumber: (r, c) => service.getTdByNumber(r.number, c.metadata),
    getBlockInfoInBatch: (r, c) =>
      service.getBlockInfoInBatch(r.startBlockNumber, r.endBlockNumber, c.metadata),
  };
  return startGrpcServer({
    host: options.host,
    port: options.port,
    services: [grpcService(bor.BorApi, implementation)],
    onOutcome: (method, code) =>
      service.metrics.grpcCalls.inc({
        method: method.name,
        code: GrpcStatus[code] ?? String(code),
      }),
  });
}
