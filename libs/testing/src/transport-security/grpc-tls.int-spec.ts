import { billingV1 } from '@meridian/contracts';
import { TestPki, type TestCa, type TestIdentity } from '../test-pki';
import {
  createGrpcClient,
  grpcService,
  startGrpcServer,
  type GrpcTls,
  type RunningGrpcServer,
} from '@meridian/platform-grpc';

/** billing.v1 over TLS and mutual TLS, real server and client on loopback, certificates of a test CA. */

const billing = grpcService(billingV1.BillingService, {
  async resolveAccessToken(request) {
    return { found: request.token === 'tok_good', accountId: 'acc_1' };
  },
});

let pki: TestPki;
let ca: TestCa;
let otherCa: TestCa;
let server: TestIdentity;
let client: TestIdentity;
let strangerClient: TestIdentity;
const running: RunningGrpcServer[] = [];

beforeAll(async () => {
  pki = new TestPki();
  ca = await pki.ca('meridian internal CA');
  otherCa = await pki.ca('some other CA');
  server = await ca.issue('billing-ledger', ['billing-ledger', 'localhost', '127.0.0.1']);
  client = await ca.issue('rpc-gateway');
  strangerClient = await otherCa.issue('rpc-gateway');
});

afterAll(async () => {
  await Promise.all(running.map((r) => r.close(500)));
  pki.remove();
});

async function serve(tls: GrpcTls | undefined): Promise<string> {
  const r = await startGrpcServer({ host: '127.0.0.1', port: 0, services: [billing], tls });
  running.push(r);
  return `127.0.0.1:${r.port}`;
}

async function call(address: string, tls: GrpcTls | undefined) {
  const c = createGrpcClient(billingV1.BillingService, address, { tls, defaultTimeoutMs: 3_000 });
  try {
    return await c.resolveAccessToken({ token: 'tok_good' });
  } finally {
    c.close();
  }
}

describe('gRPC over TLS (server certificate of a private CA)', () => {
  let address: string;
  beforeAll(async () => {
    address = await serve({ certFile: server.certFile, keyFile: server.keyFile });
  });

  it('answers a client that trusts the CA', async () => {
    await expect(call(address, { caFile: ca.certFile })).resolves.toMatchObject({
      found: true,
      accountId: 'acc_1',
    });
  });

  it('is refused by a client that trusts another CA (UNAVAILABLE, the certificate named)', async () => {
    await expect(call(address, { caFile: otherCa.certFile })).rejects.toMatchObject({
      code: 'grpc_unavailable',
      kind: 'unavailable',
      message: expect.stringMatching(/certificate/i),
    });
  });

  it('does not answer a plaintext client', async () => {
    await expect(call(address, undefined)).rejects.toMatchObject({ kind: 'unavailable' });
  });

  it('checks the name: dialled by a name the certificate lacks, unless serverName says it', async () => {
    const onlyName = await ca.issue('billing-ledger', ['billing-ledger']);
    const named = await serve({ certFile: onlyName.certFile, keyFile: onlyName.keyFile });
    await expect(call(named, { caFile: ca.certFile })).rejects.toMatchObject({
      kind: 'unavailable',
    });
    await expect(
      call(named, { caFile: ca.certFile, serverName: 'billing-ledger' }),
    ).resolves.toMatchObject({ found: true });
  });
});

describe('gRPC over mutual TLS (requireClientCert)', () => {
  let address: string;
  beforeAll(async () => {
    address = await serve({
      caFile: ca.certFile,
      certFile: server.certFile,
      keyFile: server.keyFile,
      requireClientCert: true,
    });
  });

  it('answers a client with a certificate of the CA', async () => {
    await expect(
      call(address, { caFile: ca.certFile, certFile: client.certFile, keyFile: client.keyFile }),
    ).resolves.toMatchObject({ found: true });
  });

  it('refuses a client without a certificate', async () => {
    await expect(call(address, { caFile: ca.certFile })).rejects.toMatchObject({
      kind: 'unavailable',
    });
  });

  it('refuses a client whose certificate another CA signed', async () => {
    await expect(
      call(address, {
        caFile: ca.certFile,
        certFile: strangerClient.certFile,
        keyFile: strangerClient.keyFile,
      }),
    ).rejects.toMatchObject({ kind: 'unavailable' });
  });
});

describe('plaintext (the default for local runs)', () => {
  it('serves and calls without TLS settings', async () => {
    const address = await serve(undefined);
    await expect(call(address, undefined)).resolves.toMatchObject({ found: true });
  });
});
