import { toBinary, type DescFile, type DescService } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { Server, type ChannelOptions, type ServerCredentials } from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import {
  toGrpcHandlers,
  toGrpcServiceDefinition,
  type GrpcOutcomeHook,
  type GrpcServiceImplementation,
} from './grpc-service-definition';
import { AddressInUseError, refuseAddressInUse } from '@meridian/platform-http';
import type { Registry } from 'prom-client';
import { GrpcServerMetrics } from './grpc-server-metrics';
import { grpcServerCredentials, type GrpcTls } from './grpc-tls';

export interface GrpcServiceBinding<M extends GenServiceMethods = GenServiceMethods> {
  service: GenService<M>;
  implementation: Partial<GrpcServiceImplementation<M>>;
}

/** Pairs a generated service with its implementation, keeping the two type-checked together. */
export function grpcService<M extends GenServiceMethods>(
  service: GenService<M>,
  implementation: Partial<GrpcServiceImplementation<M>>,
): GrpcServiceBinding {
  return { service, implementation } as unknown as GrpcServiceBinding;
}

export interface StartGrpcServerOptions {
  host?: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** The setting `port` came from, named when the port is in use; GRPC_PORT unless given. */
  portSetting?: string;
  services: GrpcServiceBinding[];
  /** gRPC server reflection (grpcurl, Postman) for the given services; on by default. */
  reflection?: boolean;
  /** TLS (mutual with `requireClientCert`) with a certificate and key; plaintext without. */
  tls?: GrpcTls;
  /** Overrides `tls`. */
  credentials?: ServerCredentials;
  channelOptions?: ChannelOptions;
  /** Status of every finished call (per-method metrics). */
  onOutcome?: GrpcOutcomeHook;
  /**
   * Where `grpc_server_handled_total` and `grpc_server_handling_seconds` register (the app's
   * Registry, served on /metrics): every unary call counted and timed by service, method and code.
   */
  registry?: Registry;
}

export interface RunningGrpcServer {
  server: Server;
  port: number;
  /** Finishes in-flight calls, then stops; forces after `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

/** Every file a set of files depends on (transitively), dependencies first, each once. */
export function fileClosure(files: DescFile[]): DescFile[] {
  const out: DescFile[] = [];
  const seen = new Set<string>();
  const visit = (file: DescFile): void => {
    if (seen.has(file.name)) return;
    seen.add(file.name);
    file.dependencies.forEach(visit);
    out.push(file);
  };
  files.forEach(visit);
  return out;
}

/**
 * The input @grpc/reflection expects (a proto-loader package definition): serialized
 * FileDescriptorProtos, here taken from the descriptors embedded in the generated code, so
 * reflection needs no .proto files at run time.
 */
export function reflectionPackageDefinition(services: DescService[]) {
  const fileDescriptorProtos = fileClosure(services.map((s) => s.file)).map((file) =>
    Buffer.from(toBinary(FileDescriptorProtoSchema, file.proto)),
  );
  return Object.fromEntries(
    services.map((s) => [s.typeName, { fileDescriptorProtos }]),
  ) as unknown as ConstructorParameters<typeof ReflectionService>[0];
}

/** Starts a grpc-js server with the given services (and reflection on them). */
export async function startGrpcServer(options: StartGrpcServerOptions): Promise<RunningGrpcServer> {
  const server = new Server(options.channelOptions);
  const onOutcome = withMetrics(options.onOutcome, options.registry);
  for (const { service, implementation } of options.services) {
    server.addService(
      toGrpcServiceDefinition(service),
      toGrpcHandlers(service, implementation, onOutcome),
    );
  }
  if (options.reflection ?? true) {
    new ReflectionService(
      reflectionPackageDefinition(options.services.map((s) => s.service)),
    ).addToServer(server);
  }
  const host = options.host ?? '0.0.0.0';
  const setting = options.portSetting ?? 'GRPC_PORT';
  // Asked first: grpc-js logs "No address added…" itself and fails with a trace (QA); the app's
  // start (createHttpApp's listen) turns this error into one fatal line.
  await refuseAddressInUse(setting, options.port, host);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `${host}:${options.port}`,
      options.credentials ?? grpcServerCredentials(options.tls),
      (error, bound) => {
        if (!error) return resolve(bound);
        // Taken between the question and the bind.
        reject(
          /EADDRINUSE/.test(error.message)
            ? new AddressInUseError(setting, host, options.port)
            : error,
        );
      },
    ),
  );
  return {
    server,
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

/** The caller's outcome hook, after the metrics when a registry was given. */
function withMetrics(
  onOutcome: GrpcOutcomeHook | undefined,
  registry: Registry | undefined,
): GrpcOutcomeHook | undefined {
  if (!registry) return onOutcome;
  const metrics = new GrpcServerMetrics(registry);
  return (method, code, failure, seconds, call) => {
    metrics.record(method, code, seconds);
    onOutcome?.(method, code, failure, seconds, call);
  };
}
