import { create } from '@bufbuild/protobuf';
import { Metadata, status } from '@grpc/grpc-js';
import { currentRequestId } from '@meridian/platform-observability';
import { billingV1, bor, borCommon } from '@meridian/contracts';
import { DomainError, type ErrorKind } from '@meridian/errors';
import {
  fileClosure,
  fromGrpcError,
  GrpcStatusError,
  grpcStatusOf,
  MAX_STATUS_DETAILS,
  toGrpcHandlers,
  toGrpcServiceDefinition,
  toGrpcStatus,
} from './index';

describe('toGrpcServiceDefinition', () => {
  it('uses /<package>.<Service>/<Method> paths, keyed by local name', () => {
    const definition = toGrpcServiceDefinition(bor.BorApi);
    expect(definition['headerByNumber']!.path).toBe('/bor.BorApi/HeaderByNumber');
    expect(definition['getStartBlockHeimdallSpanID']!.path).toBe(
      '/bor.BorApi/GetStartBlockHeimdallSpanID',
    );
    expect(toGrpcServiceDefinition(billingV1.BillingService)['resolveApiKey']!.path).toBe(
      '/billing.v1.BillingService/ResolveApiKey',
    );
    expect(Object.values(definition).every((m) => !m.requestStream && !m.responseStream)).toBe(
      true,
    );
  });

  it('round-trips messages through the binary serializers', () => {
    const method = toGrpcServiceDefinition(bor.BorApi)['transactionReceipt']!;
    const hash = create(borCommon.H256Schema, { Hi: { Hi: 1n, Lo: 2n }, Lo: { Hi: 3n, Lo: 4n } });
    const request = create(bor.ReceiptRequestSchema, { hash });
    const bytes = method.requestSerialize(request);
    expect(method.requestDeserialize(bytes)).toEqual(request);
  });
});

describe('status mapping', () => {
  it.each<[ErrorKind, status]>([
    ['invalid', status.INVALID_ARGUMENT],
    ['unauthenticated', status.UNAUTHENTICATED],
    ['forbidden', status.PERMISSION_DENIED],
    ['not_found', status.NOT_FOUND],
    ['rate_limited', status.RESOURCE_EXHAUSTED],
    ['payment_required', status.RESOURCE_EXHAUSTED],
    ['unavailable', status.UNAVAILABLE],
    ['unimplemented', status.UNIMPLEMENTED],
    ['internal', status.INTERNAL],
  ])('%s → %s', (kind, code) => {
    expect(grpcStatusOf[kind]).toBe(code);
    expect(toGrpcStatus(new DomainError('x', kind, 'safe message'))).toMatchObject({
      code,
      details: 'safe message',
    });
  });

  it('answers a GrpcStatusError with its own status (statuses no DomainError kind stands for)', () => {
    expect(toGrpcStatus(new GrpcStatusError(status.UNIMPLEMENTED, 'not on this node'))).toEqual({
      code: status.UNIMPLEMENTED,
      details: 'not on this node',
    });
  });

  it('reports the status of every finished call to the outcome hook', async () => {
    const outcomes: Array<[string, status]> = [];
    const handlers = toGrpcHandlers(
      bor.BorApi,
      {
        getAuthor: async () => ({}),
        getTdByNumber: async () => {
          throw new GrpcStatusError(status.UNIMPLEMENTED, 'no total difficulty');
        },
        getRootHash: async () => {
          throw new DomainError('bad_range', 'invalid', 'bad range');
        },
      },
      (method, code) => outcomes.push([method.name, code]),
    );
    const call = (name: string) =>
      new Promise<void>((resolve) =>
        (handlers[name] as (call: unknown, callback: () => void) => void)(
          { request: {}, metadata: new Metadata() },
          () => resolve(),
        ),
      );
    await call('getAuthor');
    await call('getTdByNumber');
    await call('getRootHash');
    expect(outcomes).toEqual([
      ['GetAuthor', status.OK],
      ['GetTdByNumber', status.UNIMPLEMENTED],
      ['GetRootHash', status.INVALID_ARGUMENT],
    ]);
  });

  it('answers INVALID_ARGUMENT, not INTERNAL, for request bytes that are not the message', async () => {
    const definition = toGrpcServiceDefinition(bor.BorApi);
    const outcomes: status[] = [];
    const handlers = toGrpcHandlers(
      bor.BorApi,
      { getVoteOnHash: async () => ({ response: true }) },
      (_method, code) => outcomes.push(code),
    );
    const request = definition['getVoteOnHash']!.requestDeserialize(Buffer.from('57ff33', 'hex'));
    const answered = await new Promise<{ code?: status }>((resolve) =>
      (handlers['getVoteOnHash'] as (call: unknown, callback: (e: unknown) => void) => void)(
        { request, metadata: new Metadata() },
        (error) => resolve(error as { code?: status }),
      ),
    );
    expect(answered.code).toBe(status.INVALID_ARGUMENT);
    expect(outcomes).toEqual([status.INVALID_ARGUMENT]);
  });

  it("runs each call's work under its request id: the caller's x-request-id when sane, otherwise a new one", async () => {
    const seen: (string | undefined)[] = [];
    const handlers = toGrpcHandlers(bor.BorApi, {
      getAuthor: async () => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        seen.push(currentRequestId());
        return {};
      },
    });
    const call = (requestId: string) =>
      new Promise<void>((resolve) => {
        const metadata = new Metadata();
        metadata.set('x-request-id', requestId);
        (handlers['getAuthor'] as (call: unknown, callback: () => void) => void)(
          { request: {}, metadata },
          () => resolve(),
        );
      });
    await Promise.all([call('grpc-1'), call('grpc-2'), call('not sane: spaces')]);
    expect(seen.slice(0, 2)).toEqual(['grpc-1', 'grpc-2']);
    expect(seen[2]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('tells the outcome hook a failed call with its error and request id (an edge without a request context logs it by name)', async () => {
    const failures: Array<[status, string | undefined, unknown]> = [];
    const handlers = toGrpcHandlers(
      bor.BorApi,
      {
        getAuthor: async () => {
          throw new Error('broke');
        },
      },
      (_method, code, failure) =>
        failures.push([code, failure?.requestId, (failure?.error as Error | undefined)?.message]),
    );
    const metadata = new Metadata();
    metadata.set('x-request-id', 'grpc-failed-1');
    const answered = await new Promise<{ code?: status }>((resolve) =>
      (handlers['getAuthor'] as (call: unknown, callback: (e: unknown) => void) => void)(
        { request: {}, metadata },
        (error) => resolve(error as { code?: status }),
      ),
    );
    expect(answered.code).toBe(status.INTERNAL);
    expect(failures).toEqual([[status.INTERNAL, 'grpc-failed-1', 'broke']]);
  });

  it('bounds the status message (it rides in an HTTP/2 trailer)', () => {
    const { details } = toGrpcStatus(new DomainError('x', 'invalid', 'y'.repeat(100_000)));
    expect(details!.length).toBe(MAX_STATUS_DETAILS);
  });

  it('never leaks the message of a non-domain error', () => {
    expect(toGrpcStatus(new Error('secret'))).toMatchObject({
      code: status.INTERNAL,
      details: 'internal error',
    });
  });

  it('a refusal that says when to come back carries the wait in the retry-after-ms trailer', () => {
    const { metadata } = toGrpcStatus(
      new DomainError('rate_limited', 'rate_limited', 'rate limit exceeded', {
        details: { retryAfterMs: 49.2 },
      }),
    );
    expect(metadata!.get('retry-after-ms')).toEqual(['50']);
    expect(metadata!.get('error-retryable')).toEqual(['true']);
    const { metadata: none } = toGrpcStatus(new DomainError('x', 'rate_limited', 'y'));
    expect(none!.get('retry-after-ms')).toEqual([]);
  });

  it('rebuilds a DomainError from a status with the code and retryable trailers', () => {
    const { metadata } = toGrpcStatus(
      new DomainError('slow_down', 'rate_limited', 'rate limit exceeded'),
    );
    const error = fromGrpcError(
      Object.assign(new Error('x'), {
        code: status.RESOURCE_EXHAUSTED,
        details: 'rate limit exceeded',
        metadata: metadata!,
      }),
    );
    expect(error).toMatchObject({
      code: 'slow_down',
      kind: 'rate_limited',
      message: 'rate limit exceeded',
      retryable: true,
    });
  });
});

describe('fileClosure', () => {
  it('lists dependencies first, each once', () => {
    const names = fileClosure([
      bor.BorApi.file,
      billingV1.BillingService.file,
      bor.BorApi.file,
    ]).map((f) => f.name);
    expect(names).toEqual([
      'bor/v1/common',
      'bor/v1/bor',
      'google/protobuf/timestamp',
      'billing/v1/billing',
    ]);
  });
});
