import { create, type MessageInitShape, type MessageShape } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import {
  Metadata,
  credentials as grpcCredentials,
  makeGenericClientConstructor,
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type ServiceError,
} from '@grpc/grpc-js';
import { toGrpcServiceDefinition } from './grpc-service-definition';
import { grpcChannelCredentials, grpcTlsChannelOptions, type GrpcTls } from './grpc-tls';
import { fromGrpcError } from './grpc-status';

export interface GrpcCallOptions {
  /** Per-call metadata, e.g. `{ 'x-access-token': token }`. */
  metadata?: Record<string, string> | Metadata;
  /** Relative timeout; the call fails with DEADLINE_EXCEEDED (→ DomainError unavailable) after it. */
  timeoutMs?: number;
}

/** A typed promise client: one method per unary RPC (lowerCamelCase), errors as DomainErrors. */
export type GrpcClient<M extends GenServiceMethods> = {
  [K in keyof M as M[K]['methodKind'] extends 'unary' ? K : never]: (
    request: MessageInitShape<M[K]['input']>,
    options?: GrpcCallOptions,
  ) => Promise<MessageShape<M[K]['output']>>;
} & {
  /** The underlying grpc-js client (channel state, close). */
  readonly $client: Client;
  close(): void;
};

export interface CreateGrpcClientOptions {
  /** TLS to the server (a CA; a client certificate for mutual TLS); plaintext without. */
  tls?: GrpcTls;
  /** Overrides `tls`. */
  credentials?: ChannelCredentials;
  channelOptions?: ChannelOptions;
  /** Applied when a call gives none. */
  defaultTimeoutMs?: number;
}

/**
 * A client for a generated service at `address` (host:port). Failed calls reject with a
 * DomainError (kind from the status, code from the server's `error-code` trailer), so callers
 * handle remote errors like local ones.
 */
export function createGrpcClient<M extends GenServiceMethods>(
  service: GenService<M>,
  address: string,
  options: CreateGrpcClientOptions = {},
): GrpcClient<M> {
  const Ctor = makeGenericClientConstructor(toGrpcServiceDefinition(service), service.typeName);
  const client = new Ctor(
    address,
    options.credentials ?? (options.tls ? grpcChannelCredentials(options.tls) : insecure()),
    { ...grpcTlsChannelOptions(options.tls), ...options.channelOptions },
  );
  const typed: Record<string, unknown> = { $client: client, close: () => client.close() };
  for (const method of service.methods) {
    if (method.methodKind !== 'unary') continue;
    typed[method.localName] = (request: unknown, call: GrpcCallOptions = {}) =>
      new Promise((resolve, reject) => {
        const metadata =
          call.metadata instanceof Metadata ? call.metadata : toMetadata(call.metadata);
        const timeoutMs = call.timeoutMs ?? options.defaultTimeoutMs;
        const callOptions =
          timeoutMs === undefined ? {} : { deadline: new Date(Date.now() + timeoutMs) };
        const fn = (client as unknown as Record<string, (...args: unknown[]) => void>)[
          method.localName
        ]!;
        fn.call(
          client,
          create(method.input, request as never),
          metadata,
          callOptions,
          (error: ServiceError | null, response: unknown) =>
            error ? reject(fromGrpcError(error)) : resolve(response),
        );
      });
  }
  return typed as GrpcClient<M>;
}

const insecure = () => grpcCredentials.createInsecure();

function toMetadata(values: Record<string, string> = {}): Metadata {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(values)) metadata.set(key, value);
  return metadata;
}
