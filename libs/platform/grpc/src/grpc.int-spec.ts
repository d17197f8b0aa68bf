import { join } from 'node:path';
import { create, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import {
  credentials,
  loadPackageDefinition,
  makeGenericClientConstructor,
  Metadata,
  status,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { billingV1, bor } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { Registry } from 'prom-client';
import {
  createGrpcClient,
  grpcService,
  startGrpcServer,
  toGrpcServiceDefinition,
  type RunningGrpcServer,
} from './index';

/** Calls of getAccountState('held') wait here until `release`. */
const held = (() => {
  let release: () => void = () => undefined;
  let gate = new Promise<void>((r) => (release = r));
  return {
    calls: [] as Array<{ cancelled: boolean }>,
    next: () => gate,
    release: () => {
      release();
      gate = new Promise<void>((r) => (release = r));
    },
  };
})();

let running: RunningGrpcServer;
let address: string;
const registry = new Registry();

const billing = grpcService(billingV1.BillingService, {
  async resolveAccessToken(request, call) {
    if (request.token === 'boom') throw new Error('database password is hunter2');
    if (request.token !== 'tok_good') return { found: false };
    return {
      found: true,
      tokenId: 'at_1',
      accountId: 'acc_1',
      networkKey: 'polygon-mainnet',
      planId: String(call.metadata.get('x-plan')[0] ?? 'free'),
      account: {
        accountId: 'acc_1',
        balance: { status: billingV1.BalanceStatus.OK, allowanceCu: 50_000n },
      },
    };
  },
  async getAccountState(request, call) {
    // Held until the test lets it go, once grpc-js has ended it (cancelled, past its deadline).
    if (request.accountId === 'held') {
      held.calls.push(call);
      await held.next();
    }
    throw new DomainError('account_not_found', 'not_found', `no account ${request.accountId}`);
  },
});

beforeAll(async () => {
  running = await startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    services: [billing, grpcService(bor.BorApi, {})],
    registry,
  });
  address = `127.0.0.1:${running.port}`;
});

afterAll(async () => {
  await running.close(1_000);
});

describe('gRPC adapter', () => {
  it('serves a method to a plain grpc-js client built from the adapter', async () => {
    const Ctor = makeGenericClientConstructor(
      toGrpcServiceDefinition(billingV1.BillingService),
      'BillingService',
    );
    const client = new Ctor(address, credentials.createInsecure());
    const metadata = new Metadata();
    metadata.set('x-plan', 'starter');
    const response = await new Promise<billingV1.ResolveAccessTokenResponse>((resolve, reject) =>
      (client as unknown as Record<string, (...a: unknown[]) => void>)['resolveAccessToken']!.call(
        client,
        create(billingV1.ResolveAccessTokenRequestSchema, { token: 'tok_good' }),
        metadata,
        (error: ServiceError | null, value: billingV1.ResolveAccessTokenResponse) =>
          error ? reject(error) : resolve(value),
      ),
    );
    expect(response).toMatchObject({
      found: true,
      accountId: 'acc_1',
      networkKey: 'polygon-mainnet',
      planId: 'starter',
    });
    expect(response.account?.balance?.allowanceCu).toBe(50_000n);
    client.close();
  });

  it('the typed client answers found=false for an unknown credential', async () => {
    const client = createGrpcClient(billingV1.BillingService, address, { defaultTimeoutMs: 5_000 });
    await expect(client.resolveAccessToken({ token: 'nope' })).resolves.toMatchObject({
      found: false,
      accountId: '',
    });
    client.close();
  });

  it('maps a DomainError to its status, and back to a DomainError on the client', async () => {
    const client = createGrpcClient(billingV1.BillingService, address);
    const error = await client.getAccountState({ accountId: 'acc_x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({
      code: 'account_not_found',
      kind: 'not_found',
      message: 'no account acc_x',
      retryable: false,
    });
    expect((error as DomainError).cause).toMatchObject({ code: status.NOT_FOUND });
    client.close();
  });

  it('hides the message of an unexpected error behind INTERNAL', async () => {
    const client = createGrpcClient(billingV1.BillingService, address);
    const error = await client.resolveAccessToken({ token: 'boom' }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      kind: 'internal',
      code: 'internal_error',
      message: 'internal error',
    });
    expect((error as DomainError).cause).toMatchObject({ code: status.INTERNAL });
    client.close();
  });

  it('answers UNIMPLEMENTED on the wire-compatible Bor path for a method without implementation', async () => {
    const client = createGrpcClient(bor.BorApi, address);
    const error = await client.headerByNumber({ number: 'latest' }).catch((e: unknown) => e);
    // grpc-js names the local method when the path is registered but has no handler (an unknown
    // path would be named in full): the Bor path exists on the server.
    expect((error as DomainError).cause).toMatchObject({
      code: status.UNIMPLEMENTED,
      details: 'The server does not implement the method headerByNumber',
    });
    client.close();
  });
});

describe('server metrics (the calls above)', () => {
  it('counts and times every answered call by service, method and status code', async () => {
    const text = await registry.metrics();
    const line = (name: string, method: string, code: string) =>
      new RegExp(
        `^${name}\\{grpc_service="billing\\.v1\\.BillingService",grpc_method="${method}",grpc_code="${code}"\\} (\\d+)$`,
        'm',
      ).exec(text)?.[1];
    // tok_good, nope: OK twice; boom: INTERNAL; acc_x: NOT_FOUND.
    expect(line('grpc_server_handled_total', 'ResolveAccessToken', 'OK')).toBe('2');
    expect(line('grpc_server_handled_total', 'ResolveAccessToken', 'INTERNAL')).toBe('1');
    expect(line('grpc_server_handled_total', 'GetAccountState', 'NOT_FOUND')).toBe('1');
    expect(line('grpc_server_handling_seconds_count', 'ResolveAccessToken', 'OK')).toBe('2');
    expect(text).toContain('# TYPE grpc_server_handling_seconds histogram');
  });

  it('counts a call its client cancelled as CANCELLED and one past its deadline as DEADLINE_EXCEEDED, not as what the handler came to', async () => {
    const Ctor = makeGenericClientConstructor(
      toGrpcServiceDefinition(billingV1.BillingService),
      'BillingService',
    );
    const client = new Ctor(address, credentials.createInsecure());
    const count = async (code: string) =>
      Number(
        new RegExp(
          `^grpc_server_handled_total\\{grpc_service="billing\\.v1\\.BillingService",grpc_method="GetAccountState",grpc_code="${code}"\\} (\\d+)$`,
          'm',
        ).exec(await registry.metrics())?.[1] ?? 0,
      );
    /** A held call; resolves to the status the client got. */
    const call = (options: object) => {
      let cancel = () => undefined as void;
      const got = new Promise<status>((resolve) => {
        const pending = (
          client as unknown as Record<string, (...a: unknown[]) => { cancel(): void }>
        )['getAccountState']!.call(
          client,
          create(billingV1.GetAccountStateRequestSchema, { accountId: 'held' }),
          new Metadata(),
          options,
          (error: ServiceError | null) => resolve(error?.code ?? status.OK),
        );
        cancel = () => pending.cancel();
      });
      return { got, cancel: () => cancel() };
    };
    /** Until the server has seen the i-th held call end (the RST_STREAM or its deadline). */
    const ended = async (i: number) => {
      const until = Date.now() + 5_000;
      while (!held.calls[i]?.cancelled && Date.now() < until)
        await new Promise((r) => setTimeout(r, 10));
      expect(held.calls[i]?.cancelled).toBe(true);
    };
    const notFound = await count('NOT_FOUND');
    try {
      const cancelled = call({});
      await new Promise((r) => setTimeout(r, 50));
      cancelled.cancel();
      expect(await cancelled.got).toBe(status.CANCELLED);
      await ended(0);
      held.release();
      const late = call({ deadline: new Date(Date.now() + 100) });
      expect(await late.got).toBe(status.DEADLINE_EXCEEDED);
      await ended(1);
      held.release();
      // Both handlers come to NOT_FOUND once let go; neither is counted so.
      const until = Date.now() + 5_000;
      while ((await count('DEADLINE_EXCEEDED')) < 1 && Date.now() < until)
        await new Promise((r) => setTimeout(r, 20));
      expect([await count('CANCELLED'), await count('DEADLINE_EXCEEDED')]).toEqual([1, 1]);
      expect(await count('NOT_FOUND')).toBe(notFound);
    } finally {
      client.close();
    }
  });
});

describe('server reflection', () => {
  const reflectionProto = join(
    require.resolve('@grpc/reflection'),
    '../../proto/grpc/reflection/v1/reflection.proto',
  );

  async function reflect(request: object): Promise<Record<string, unknown>> {
    const pkg = loadPackageDefinition(
      loadSync(reflectionProto, {
        keepCase: true,
        longs: String,
        enums: String,
        defaults: true,
        oneofs: true,
      }),
    ) as never as {
      grpc: {
        reflection: {
          v1: {
            ServerReflection: new (
              address: string,
              creds: unknown,
            ) => {
              serverReflectionInfo(): NodeJS.EventEmitter & { write(r: object): void; end(): void };
              close(): void;
            };
          };
        };
      };
    };
    const client = new pkg.grpc.reflection.v1.ServerReflection(
      address,
      credentials.createInsecure(),
    );
    try {
      return await new Promise((resolve, reject) => {
        const stream = client.serverReflectionInfo();
        stream.on('data', (response: Record<string, unknown>) => resolve(response));
        stream.on('error', reject);
        stream.write(request);
        stream.end();
      });
    } finally {
      client.close();
    }
  }

  it('lists the services', async () => {
    const response = await reflect({ list_services: '' });
    const names = (
      response['list_services_response'] as { service: { name: string }[] }
    ).service.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['billing.v1.BillingService', 'bor.BorApi']));
  });

  it('describes a service from the descriptors embedded in the generated code', async () => {
    const response = await reflect({ file_containing_symbol: 'bor.BorApi' });
    const files = (
      response['file_descriptor_response'] as { file_descriptor_proto: Buffer[] }
    ).file_descriptor_proto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));
    const borFile = files.find((f) => f.package === 'bor')!;
    expect(borFile.service[0]!.name).toBe('BorApi');
    expect(borFile.service[0]!.method.map((m) => m.name)).toContain('GetBlockInfoInBatch');
  });
});
