import {
  create,
  fromBinary,
  toBinary,
  type DescMethod,
  type DescService,
  type MessageInitShape,
  type MessageShape,
} from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import type {
  Metadata,
  MethodDefinition,
  ServerUnaryCall,
  ServiceDefinition,
  UntypedServiceImplementation,
  sendUnaryData,
} from '@grpc/grpc-js';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { performance } from 'node:perf_hooks';
import { DomainError } from '@meridian/errors';
import { enterRequest, requestIdFrom } from '@meridian/platform-observability';
import { toGrpcStatus } from './grpc-status';

/**
 * Told how each call ended; a failed call also brings its error and the call's request id (the
 * caller's `x-request-id` or a new one), so an edge without a request context can log it by name;
 * `seconds`: from the decoded request to the answer; `call`: every call's request id and its
 * metadata (what the implementation was given, for an edge that logs each call).
 */
export type GrpcOutcomeHook = (
  method: DescMethod,
  code: GrpcStatus,
  failure: { error: unknown; requestId: string } | undefined,
  seconds: number,
  call: { requestId: string; metadata: Metadata },
) => void;

type UnaryMethods<M extends GenServiceMethods> = {
  [K in keyof M as M[K]['methodKind'] extends 'unary' ? K : never]: M[K];
};

/**
 * Server implementation of a generated service: one async function per unary method, taking
 * the decoded request and returning the response (plain init object or message). Throw a
 * DomainError to answer with its mapped status.
 */
export type GrpcServiceImplementation<M extends GenServiceMethods> = {
  [K in keyof UnaryMethods<M>]: (
    request: MessageShape<M[K]['input']>,
    call: ServerUnaryCall<MessageShape<M[K]['input']>, MessageShape<M[K]['output']>>,
  ) => Promise<MessageInitShape<M[K]['output']>>;
};

/**
 * A request whose bytes are not the method's message. grpc-js answers INTERNAL when the
 * deserializer throws, but the mistake is the client's: the decoder hands this marker to the
 * handler instead, which answers INVALID_ARGUMENT.
 */
const UNDECODABLE = Symbol('undecodable request');

export const MALFORMED_REQUEST = new DomainError(
  'malformed_request',
  'invalid',
  'the request message is not valid protobuf for this method',
);

function decodeRequest(method: DescMethod, bytes: Buffer): unknown {
  try {
    return fromBinary(method.input, bytes);
  } catch {
    return UNDECODABLE;
  }
}

/** `/<package>.<Service>/<Method>` */
export function grpcPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/**
 * A protobuf-es v2 service descriptor as a @grpc/grpc-js ServiceDefinition: paths
 * `/<package>.<Service>/<Method>`, binary (de)serialization with toBinary/fromBinary. Keys are
 * the methods' local names (lowerCamelCase), as grpc-js generic clients expect.
 */
export function toGrpcServiceDefinition(service: DescService): ServiceDefinition {
  const definition: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const method of service.methods) {
    definition[method.localName] = {
      path: grpcPath(method),
      originalName: method.localName,
      requestStream:
        method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming',
      responseStream:
        method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming',
      requestSerialize: (message) => Buffer.from(toBinary(method.input, message as never)),
      requestDeserialize: (bytes: Buffer) => decodeRequest(method, bytes),
      responseSerialize: (message) => Buffer.from(toBinary(method.output, message as never)),
      responseDeserialize: (bytes: Buffer) => fromBinary(method.output, bytes),
    };
  }
  return definition;
}

/**
 * The status the client got for a unary call whose handler came to `answered`: grpc-js ended a
 * call that is `cancelled` before our answer, DEADLINE_EXCEEDED when its deadline has passed
 * (grpc-js answers it itself, then cancels), CANCELLED when its client cancelled it. Never OK
 * for an answer nobody received (QA: cancelled calls were logged and counted OK).
 */
export function clientGotStatus(
  call: Pick<ServerUnaryCall<unknown, unknown>, 'cancelled'> & {
    getDeadline?: () => Date | number;
  },
  answered: GrpcStatus,
): GrpcStatus {
  if (!call.cancelled) return answered;
  const deadline = call.getDeadline?.();
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  return ms !== undefined && Number.isFinite(ms) && Date.now() >= ms
    ? GrpcStatus.DEADLINE_EXCEEDED
    : GrpcStatus.CANCELLED;
}

/**
 * grpc-js handlers for a typed implementation: each unary call awaits the implementation,
 * builds the response message, and maps a thrown error once (DomainError kind → status).
 * Methods the implementation leaves out answer UNIMPLEMENTED (grpc-js default). The outcome
 * hook gets the status the client got (`clientGotStatus`).
 */
export function toGrpcHandlers<M extends GenServiceMethods>(
  service: GenService<M>,
  implementation: Partial<GrpcServiceImplementation<M>>,
  onOutcome?: GrpcOutcomeHook,
): UntypedServiceImplementation {
  const handlers: UntypedServiceImplementation = {};
  for (const method of service.methods) {
    const impl = (
      implementation as Record<
        string,
        ((request: unknown, call: unknown) => Promise<unknown>) | undefined
      >
    )[method.localName];
    if (!impl || method.methodKind !== 'unary') continue;
    handlers[method.localName] = (
      call: ServerUnaryCall<unknown, unknown>,
      callback: sendUnaryData<unknown>,
    ) => {
      const started = performance.now();
      // The call's id for everything it causes (the process guard names it if one fails).
      const given = call.metadata.get('x-request-id')[0];
      const requestId = requestIdFrom(typeof given === 'string' ? given : undefined);
      enterRequest(requestId);
      const ended = { requestId, metadata: call.metadata };
      const answer =
        call.request === UNDECODABLE ? Promise.reject(MALFORMED_REQUEST) : impl(call.request, call);
      answer.then(
        (response) => {
          onOutcome?.(
            method,
            clientGotStatus(call, GrpcStatus.OK),
            undefined,
            (performance.now() - started) / 1_000,
            ended,
          );
          callback(null, create(method.output, response as never));
        },
        (error: unknown) => {
          const status = toGrpcStatus(error);
          onOutcome?.(
            method,
            clientGotStatus(call, status.code ?? GrpcStatus.INTERNAL),
            { error, requestId },
            (performance.now() - started) / 1_000,
            ended,
          );
          callback(status);
        },
      );
    };
  }
  return handlers;
}

export type { Metadata };
