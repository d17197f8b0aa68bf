import { X509Certificate } from 'node:crypto';
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { billingV1 } from '@meridian/contracts';
import {
  createGrpcClient,
  grpcService,
  reportTlsReloads,
  startGrpcServer,
  type GrpcClient,
  type GrpcTls,
  type RunningGrpcServer,
  type TlsReloadEvent,
} from '@meridian/platform-grpc';
import { Registry } from 'prom-client';
import { TestPki, type TestCa, type TestIdentity } from '../test-pki';

/**
 * Certificates renewed in place (cert-manager rewriting a mounted Secret) are taken by a running
 * gRPC server and client without a restart; a broken renewal is refused and the last good
 * certificate kept (ADR 0506). Real grpc-js servers and clients on loopback, files rewritten
 * under them, the refresh interval shortened and the change polled for with a bound.
 */

const REFRESH_MS = 50;
const BOUND_MS = 10_000;

const billing = grpcService(billingV1.BillingService, {
  async resolveAccessToken(request) {
    return { found: request.token === 'tok_good', accountId: 'acc_1' };
  },
});

type Billing = GrpcClient<(typeof billingV1.BillingService)['method']>;

let pki: TestPki;
let ca1: TestCa;
let ca2: TestCa;
const running: RunningGrpcServer[] = [];
const clients: Billing[] = [];

beforeAll(async () => {
  pki = new TestPki();
  ca1 = await pki.ca('internal CA 2026');
  ca2 = await pki.ca('internal CA 2027');
});

afterAll(async () => {
  for (const c of clients) c.close();
  await Promise.all(running.map((r) => r.close(500)));
  pki.remove();
});

interface SecretFiles {
  cert: string;
  key: string;
  ca: string;
}

/**
 * A Secret mounted as the kubelet writes one (cert-manager's `tls.crt`, `tls.key`, `ca.crt`):
 * each file a link through `..data` to a directory of one version, and an update a new
 * directory swapped in by renaming the link, so the files change together, never half.
 */
class SecretMount {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string;
  private readonly dir: string;
  private version = 0;
  private current: SecretFiles;

  constructor(name: string, files: SecretFiles) {
    this.dir = join(pki.dir, name);
    mkdirSync(this.dir);
    this.current = files;
    this.write();
    [this.certFile, this.keyFile, this.caFile] = ['tls.crt', 'tls.key', 'ca.crt'].map((file) => {
      const path = join(this.dir, file);
      symlinkSync(join('..data', file), path);
      return path;
    }) as [string, string, string];
  }

  update(files: Partial<SecretFiles>): void {
    this.current = { ...this.current, ...files };
    this.write();
  }

  private write(): void {
    const version = `..v${++this.version}`;
    mkdirSync(join(this.dir, version));
    writeFileSync(join(this.dir, version, 'tls.crt'), this.current.cert);
    writeFileSync(join(this.dir, version, 'tls.key'), this.current.key);
    writeFileSync(join(this.dir, version, 'ca.crt'), this.current.ca);
    symlinkSync(version, join(this.dir, '..data_tmp'));
    renameSync(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
  }
}

const filesOf = ({ certFile, keyFile, caFile }: SecretMount) => ({ certFile, keyFile, caFile });

const mount = (name: string, identity: TestIdentity, ca: string) =>
  new SecretMount(name, { cert: identity.cert, key: identity.key, ca });

/** Several PEM certificates in one file (a CA bundle during a move). */
const bundle = (...pems: string[]) => pems.map((pem) => `${pem.trimEnd()}\n`).join('');

const serialOf = (pem: string) => new X509Certificate(pem).serialNumber;

async function serve(tls: GrpcTls): Promise<string> {
  const r = await startGrpcServer({ host: '127.0.0.1', port: 0, services: [billing], tls });
  running.push(r);
  return `127.0.0.1:${r.port}`;
}

function client(address: string, tls: GrpcTls): Billing {
  const c = createGrpcClient(billingV1.BillingService, address, {
    tls: { refreshIntervalMs: REFRESH_MS, onReload: () => undefined, ...tls },
    defaultTimeoutMs: 2_000,
    // Reconnect attempts close together, so a client that failed retries soon after a renewal.
    channelOptions: {
      'grpc.initial_reconnect_backoff_ms': 50,
      'grpc.max_reconnect_backoff_ms': 200,
    },
  });
  clients.push(c);
  return c;
}

const resolve = (c: Billing) => c.resolveAccessToken({ token: 'tok_good' });

/** The serial of the certificate a new TLS connection to the server is shown. */
function servedSerial(address: string, identity?: TestIdentity): Promise<string> {
  const [host, port] = address.split(':');
  return new Promise((done, fail) => {
    const socket = connect({
      host,
      port: Number(port),
      servername: 'localhost',
      ALPNProtocols: ['h2'],
      rejectUnauthorized: false,
      cert: identity?.cert,
      key: identity?.key,
    });
    socket.once('secureConnect', () => {
      done(socket.getPeerCertificate().serialNumber);
      socket.destroy();
    });
    socket.once('error', fail);
  });
}

/** Polls `check` until it holds, for at most BOUND_MS. */
async function eventually(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  for (;;) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return;
    if (Date.now() > deadline) throw new Error(`not within ${BOUND_MS} ms: ${what}`);
    await new Promise((r) => setTimeout(r, REFRESH_MS));
  }
}

describe('a TLS server renewed in place (same CA, new serial)', () => {
  let files: SecretMount;
  let a: TestIdentity;
  let b: TestIdentity;
  let address: string;
  const events: TlsReloadEvent[] = [];
  const registry = new Registry();
  const logged: { level: string; fields: object; message: string }[] = [];
  const report = reportTlsReloads({
    tls: 'billing.v1',
    role: 'server',
    registry,
    logger: {
      info: (fields, message) => logged.push({ level: 'info', fields, message }),
      error: (fields, message) => logged.push({ level: 'error', fields, message }),
    },
  });
  const metric = async (name: string, labels: string) => {
    const line = (await registry.metrics())
      .split('\n')
      .find((l) => l.startsWith(`${name}{${labels}}`));
    return line ? Number(line.split(' ').at(-1)) : undefined;
  };

  beforeAll(async () => {
    a = await ca1.issue('billing-ledger');
    b = await ca1.issue('billing-ledger');
    files = mount('server', a, ca1.cert);
    address = await serve({
      certFile: files.certFile,
      keyFile: files.keyFile,
      refreshIntervalMs: REFRESH_MS,
      onReload: (event) => {
        events.push(event);
        report(event);
      },
    });
  });

  it('serves the new certificate to new connections; a client connected before keeps working', async () => {
    const old = client(address, { caFile: ca1.certFile });
    await expect(resolve(old)).resolves.toMatchObject({ found: true });
    expect(await servedSerial(address)).toBe(serialOf(a.cert));

    files.update({ cert: b.cert, key: b.key });
    await eventually('certificate B served', async () => {
      return (await servedSerial(address)) === serialOf(b.cert);
    });

    await expect(resolve(old)).resolves.toMatchObject({ found: true });
    await expect(resolve(client(address, { caFile: ca1.certFile }))).resolves.toMatchObject({
      found: true,
    });
    expect(events).toContainEqual(
      expect.objectContaining({
        outcome: 'loaded',
        certificate: expect.objectContaining({ serialNumber: serialOf(b.cert) }),
      }),
    );
    expect(
      await metric('grpc_tls_reloads_total', 'tls="billing.v1",role="server",outcome="loaded"'),
    ).toBe(1);
    const notAfter = Math.floor(Date.parse(new X509Certificate(b.cert).validTo) / 1_000);
    expect(
      await metric('grpc_tls_certificate_not_after_seconds', 'tls="billing.v1",role="server"'),
    ).toBe(notAfter);
    expect(logged.map((l) => l.message)).toEqual([
      'gRPC TLS files loaded',
      'gRPC TLS files renewed: serving the new ones',
    ]);
  });

  it('refuses a broken certificate and a key of another certificate, serving the last good one', async () => {
    const rejectedBefore = events.filter((e) => e.outcome === 'rejected').length;
    files.update({ cert: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' });
    await eventually('the broken certificate refused', () =>
      events.some(
        (e, i) =>
          i >= rejectedBefore &&
          e.outcome === 'rejected' &&
          /the certificate holds an unreadable certificate/.test(e.problem ?? ''),
      ),
    );
    expect(await servedSerial(address)).toBe(serialOf(b.cert));
    await expect(resolve(client(address, { caFile: ca1.certFile }))).resolves.toMatchObject({
      found: true,
    });

    const stranger = await ca1.issue('billing-ledger');
    files.update({ cert: b.cert, key: stranger.key });
    await eventually('the key of another certificate refused', () =>
      events.some(
        (e) =>
          e.outcome === 'rejected' && /is not the key of the certificate/.test(e.problem ?? ''),
      ),
    );
    expect(events.at(-1)).toMatchObject({
      outcome: 'rejected',
      certificate: { serialNumber: serialOf(b.cert) },
    });
    expect(
      await metric('grpc_tls_reloads_total', 'tls="billing.v1",role="server",outcome="rejected"'),
    ).toBeGreaterThanOrEqual(2);
    expect(logged.at(-1)).toMatchObject({
      level: 'error',
      message: 'gRPC TLS files changed but refused: still serving the last good ones',
      fields: { problem: expect.stringMatching(/is not the key of the certificate/) },
    });
    expect(await servedSerial(address)).toBe(serialOf(b.cert));
    await expect(resolve(client(address, { caFile: ca1.certFile }))).resolves.toMatchObject({
      found: true,
    });
  });
});

describe('a mutual-TLS server moved to a new CA', () => {
  it('serves the new CA certificate; a connected client keeps working; a new one needs the new CA', async () => {
    const a = await ca1.issue('billing-ledger');
    const b = await ca2.issue('billing-ledger');
    const clientOf1 = await ca1.issue('rpc-gateway');
    const files = mount('mtls-server', a, ca1.cert);
    const address = await serve({
      ...filesOf(files),
      requireClientCert: true,
      refreshIntervalMs: REFRESH_MS,
      onReload: () => undefined,
    });
    const connected = client(address, {
      caFile: ca1.certFile,
      certFile: clientOf1.certFile,
      keyFile: clientOf1.keyFile,
    });
    await expect(resolve(connected)).resolves.toMatchObject({ found: true });

    // The server's new certificate is of CA 2; during the move it accepts clients of either CA.
    files.update({ cert: b.cert, key: b.key, ca: bundle(ca1.cert, ca2.cert) });
    await eventually('certificate B (CA 2) served', async () => {
      return (await servedSerial(address, clientOf1)) === serialOf(b.cert);
    });

    // Its connection was made under certificate A and stays up.
    await expect(resolve(connected)).resolves.toMatchObject({ found: true });
    // A new client whose CA no longer verifies the server is refused...
    await expect(
      resolve(
        client(address, {
          caFile: ca1.certFile,
          certFile: clientOf1.certFile,
          keyFile: clientOf1.keyFile,
        }),
      ),
    ).rejects.toMatchObject({ kind: 'unavailable' });
    // ...one with the new CA is served, its certificate of the old CA still accepted.
    const bothCas = pki.file('ca-bundle.crt', bundle(ca1.cert, ca2.cert));
    await expect(
      resolve(
        client(address, {
          caFile: bothCas,
          certFile: clientOf1.certFile,
          keyFile: clientOf1.keyFile,
        }),
      ),
    ).resolves.toMatchObject({ found: true });
  });

  it('a client takes its renewed CA and certificate for its next connection', async () => {
    const server = await ca2.issue('billing-ledger');
    const address = await serve({
      caFile: ca2.certFile,
      certFile: server.certFile,
      keyFile: server.keyFile,
      requireClientCert: true,
    });
    const before = await ca1.issue('webhook-matcher');
    const after = await ca2.issue('webhook-matcher');
    const files = mount('client', before, ca1.cert);
    const events: TlsReloadEvent[] = [];
    const c = client(address, { ...filesOf(files), onReload: (event) => events.push(event) });
    await expect(resolve(c)).rejects.toMatchObject({ kind: 'unavailable' });

    files.update({ cert: after.cert, key: after.key, ca: ca2.cert });
    await eventually('the same client served after its files were renewed', async () => {
      return (await resolve(c)).found;
    });
    expect(events).toContainEqual(
      expect.objectContaining({
        outcome: 'loaded',
        certificate: expect.objectContaining({ serialNumber: serialOf(after.cert) }),
      }),
    );
  });
});
