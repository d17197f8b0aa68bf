import { create } from '@bufbuild/protobuf';
import {
  Server,
  ServerCredentials,
  status as GrpcStatus,
  type ServerUnaryCall,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { bor } from '@meridian/contracts';
import {
  reflectionPackageDefinition,
  toGrpcServiceDefinition,
  toGrpcStatus,
} from '@meridian/platform-grpc';
import { BorApiService, GrpcStatusError } from './bor-api.service';
import { fromH256 } from './bor-mapping';

export interface RunningBorGrpc {
  port: number;
  close(graceMs?: number): Promise<void>;
}

type Handler = (request: never, call: ServerUnaryCall<unknown, unknown>) => Promise<unknown>;

/**
 * The BorApi gRPC server (package `bor`, service `BorApi`, wire-compatible with Polygon Bor)
 * with server reflection. Thin edge: decode, call BorApiService, map errors once.
 */
export async function startBorGrpc(
  service: BorApiService,
  options: { host: string; port: number },
): Promise<RunningBorGrpc> {
  const handlers: Record<string, Handler> = {
    headerByNumber: (r: bor.GetHeaderByNumberRequest, c) =>
      service.headerByNumber(r.number, c.metadata),
    blockByNumber: (r: bor.GetBlockByNumberRequest, c) =>
      service.blockByNumber(r.number, c.metadata),
    transactionReceipt: (r: bor.ReceiptRequest, c) =>
      service.transactionReceipt(fromH256(r.hash), c.metadata),
    borBlockReceipt: (r: bor.ReceiptRequest, c) =>
      service.borBlockReceipt(fromH256(r.hash), c.metadata),
    getRootHash: (r: bor.GetRootHashRequest, c) =>
      service.getRootHash(r.startBlockNumber, r.endBlockNumber, c.metadata),
    getVoteOnHash: (r: bor.GetVoteOnHashRequest, c) => service.getVoteOnHash(r, c.metadata),
    getStartBlockHeimdallSpanID: (r: bor.GetStartBlockHeimdallSpanIDRequest, c) =>
      service.getStartBlockHeimdallSpanID(r.StartBlock, c.metadata),
    getAuthor: (r: bor.GetAuthorRequest, c) => service.getAuthor(r.number, c.metadata),
    getTdByHash: (r: bor.GetTdByHashRequest, c) =>
      service.getTdByHash(fromH256(r.hash), c.metadata),
    getTdByNumber: (r: bor.GetTdByNumberRequest, c) => service.getTdByNumber(r.number, c.metadata),
    getBlockInfoInBatch: (r: bor.GetBlockInfoInBatchRequest, c) =>
      service.getBlockInfoInBatch(r.startBlockNumber, r.endBlockNumber, c.metadata),
  };
  const implementation: UntypedServiceImplementation = {};
  for (const method of bor.BorApi.methods) {
    const handler = handlers[method.localName];
    if (!handler) continue;
    implementation[method.localName] = (
      call: ServerUnaryCall<unknown, unknown>,
      callback: sendUnaryData<unknown>,
    ) => {
      handler(call.request as never, call).then(
        (response) => {
          service.metrics.grpcCalls.inc({ method: method.name, code: 'OK' });
          callback(null, create(method.output, response as never));
        },
        (error: unknown) => {
          const status =
            error instanceof GrpcStatusError
              ? { code: error.code, details: error.message }
              : toGrpcStatus(error);
          service.metrics.grpcCalls.inc({
            method: method.name,
            code: GrpcStatus[status.code ?? GrpcStatus.INTERNAL] ?? String(status.code),
          });
          callback(status);
        },
      );
    };
  }
  const server = new Server();
  server.addService(toGrpcServiceDefinition(bor.BorApi), implementation);
  new ReflectionService(reflectionPackageDefinition([bor.BorApi])).addToServer(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `${options.host}:${options.port}`,
      ServerCredentials.createInsecure(),
      (error, bound) => (error ? reject(error) : resolve(bound)),
    ),
  );
  return {
    port,
    close: (graceMs = 5_000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
