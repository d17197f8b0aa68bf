import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { ConfigError, parseConfig } from '@meridian/platform-config';
import { freePort, TestPki, type TestCa, type TestIdentity } from '@meridian/testing';
import { configSchema } from '../config/config';
import { FleetBucketStore } from './fleet-bucket-store';
import { fleetStoreOptionsOf } from './plan-limiter';

/**
 * The fleet plan-RPS store over TLS with a private CA (RATE_LIMIT_REDIS_TLS_*): real
 * redis-servers of this test's own with `--tls-port`, certificates of a test CA, the store built
 * from a parsed gateway config as the gateway builds it. ADR 0506.
 */

let pki: TestPki;
let ca: TestCa;
let otherCa: TestCa;
let server: TestIdentity;
let gateway: TestIdentity;
const redises: ChildProcess[] = [];
const stores: FleetBucketStore[] = [];

/** A redis-server answering TLS only, on 127.0.0.1; `authClients`: its `tls-auth-clients`. */
async function startTlsRedis(authClients: 'yes' | 'no'): Promise<number> {
  const port = await freePort();
  const redis = spawn(
    'redis-server',
    [
      ...['--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1'],
      ...['--tls-cert-file', server.certFile, '--tls-key-file', server.keyFile],
      ...['--tls-ca-cert-file', ca.certFile, '--tls-auth-clients', authClients],
      ...['--save', '', '--appendonly', 'no'],
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  redises.push(redis);
  await new Promise<void>((resolve, reject) => {
    redis.once('exit', (code) => reject(new Error(`redis-server exited (${code})`)));
    createInterface({ input: redis.stdout! }).on('line', (line) => {
      if (line.includes('Ready to accept connections')) resolve();
    });
  });
  return port;
}

function gatewayConfig(env: Record<string, string>) {
  return parseConfig(configSchema, { REGION: 'eu', HTTP_PORT: '0', ...env });
}

function storeOf(env: Record<string, string>): FleetBucketStore {
  const store = new FleetBucketStore({
    ...fleetStoreOptionsOf(gatewayConfig(env)),
    keyPrefix: `test:rps:tls:${stores.length}:`,
  });
  stores.push(store);
  return store;
}

const lease = (store: FleetBucketStore) =>
  store.lease(
    { accountId: 'acc_1', ratePerSecond: 20, needed: 1, wanted: 5, returned: 0 },
    Date.now(),
  );

beforeAll(async () => {
  pki = new TestPki();
  ca = await pki.ca('redis CA');
  otherCa = await pki.ca('some other CA');
  server = await ca.issue('redis', ['localhost', '127.0.0.1']);
  gateway = await ca.issue('rpc-gateway');
});

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  for (const redis of redises) redis.kill('SIGKILL');
  pki.remove();
});

describe('a Redis whose certificate a private CA signed', () => {
  let url: string;
  beforeAll(async () => {
    url = `rediss://127.0.0.1:${await startTlsRedis('no')}`;
  });

  it('leases once the gateway is given the CA', async () => {
    const store = storeOf({ RATE_LIMIT_REDIS_URL: url, RATE_LIMIT_REDIS_TLS_CA_FILE: ca.certFile });
    await store.ready();
    await expect(lease(store)).resolves.toEqual({ ok: true, granted: 5 });
  });

  it('is not reached with the system CAs or another CA, the certificate named as the reason', async () => {
    const envs: Record<string, string>[] = [{}, { RATE_LIMIT_REDIS_TLS_CA_FILE: otherCa.certFile }];
    for (const env of envs) {
      const store = storeOf({ RATE_LIMIT_REDIS_URL: url, ...env });
      await expect(store.ready(1_500)).rejects.toThrow(
        /^rate-limit store not reachable: .*certificate/i,
      );
      await expect(lease(store)).rejects.toThrow();
    }
  });
});

describe('a Redis that verifies clients (tls-auth-clients yes)', () => {
  let url: string;
  beforeAll(async () => {
    url = `rediss://127.0.0.1:${await startTlsRedis('yes')}`;
  });

  it('leases with the CA and the gateway certificate', async () => {
    const store = storeOf({
      RATE_LIMIT_REDIS_URL: url,
      RATE_LIMIT_REDIS_TLS_CA_FILE: ca.certFile,
      RATE_LIMIT_REDIS_TLS_CERT_FILE: gateway.certFile,
      RATE_LIMIT_REDIS_TLS_KEY_FILE: gateway.keyFile,
    });
    await store.ready();
    await expect(lease(store)).resolves.toMatchObject({ ok: true });
  });

  it('reads the files again at each reconnect: a renewed certificate needs no restart', async () => {
    // The paths stay, the files are replaced, as a mounted Secret is renewed.
    const certFile = pki.file('renewing.crt', readFileSync(gateway.certFile, 'utf8'));
    const keyFile = pki.file('renewing.key', readFileSync(gateway.keyFile, 'utf8'));
    const replaceWith = (identity: TestIdentity) => {
      pki.file('renewing.crt', readFileSync(identity.certFile, 'utf8'));
      pki.file('renewing.key', readFileSync(identity.keyFile, 'utf8'));
    };
    const store = storeOf({
      RATE_LIMIT_REDIS_URL: url,
      RATE_LIMIT_REDIS_TLS_CA_FILE: ca.certFile,
      RATE_LIMIT_REDIS_TLS_CERT_FILE: certFile,
      RATE_LIMIT_REDIS_TLS_KEY_FILE: keyFile,
    });
    await store.ready();
    // Redis drops the store's connection; ioredis reconnects with what the files hold now.
    const admin = new Redis(url, {
      tls: {
        ca: readFileSync(ca.certFile),
        cert: readFileSync(gateway.certFile),
        key: readFileSync(gateway.keyFile),
      },
    });
    const dropClients = () => admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    try {
      // A certificate of another CA: refused, so the file was read again.
      replaceWith(await otherCa.issue('rpc-gateway'));
      await dropClients();
      const deadline = Date.now() + 10_000;
      while (!/alert|ECONNRESET|certificate/i.test(store.connectionError ?? '')) {
        if (Date.now() > deadline) throw new Error(`not refused: ${store.connectionError}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(store.connected).toBe(false);
      // The renewed certificate of the right CA: the next attempt connects and leases.
      replaceWith(await ca.issue('rpc-gateway'));
      await store.ready(10_000);
      await expect(lease(store)).resolves.toMatchObject({ ok: true });
    } finally {
      admin.disconnect();
    }
  });

  it('refuses the gateway without a certificate', async () => {
    const store = storeOf({ RATE_LIMIT_REDIS_URL: url, RATE_LIMIT_REDIS_TLS_CA_FILE: ca.certFile });
    // TLS 1.3: the server's refusal comes after the client thinks the handshake is done, so the
    // client reads either the alert or, on a loaded machine, the reset that follows it (CI saw
    // `write ECONNRESET`). Both are the refusal; a wrong CA or no TLS would say otherwise.
    await expect(store.ready(1_500)).rejects.toThrow(
      /^rate-limit store not reachable: .*(alert certificate required|ECONNRESET)/,
    );
  });
});

describe('RATE_LIMIT_REDIS_TLS_* checked at start', () => {
  const refused = (env: Record<string, string>) => {
    try {
      gatewayConfig(env);
      return 'accepted';
    } catch (error) {
      if (error instanceof ConfigError) return error.message;
      throw error;
    }
  };

  it('needs a rediss:// URL', () => {
    for (const RATE_LIMIT_REDIS_URL of ['', 'redis://127.0.0.1:6379'])
      expect(refused({ RATE_LIMIT_REDIS_URL, RATE_LIMIT_REDIS_TLS_CA_FILE: ca.certFile })).toBe(
        'config error: RATE_LIMIT_REDIS_URL is invalid: not a rediss:// URL while RATE_LIMIT_REDIS_TLS_CA_FILE is set',
      );
  });

  it('refuses a file of the wrong kind, a certificate without its key, a key of another', () => {
    const url = { RATE_LIMIT_REDIS_URL: 'rediss://redis:6380' };
    expect(refused({ ...url, RATE_LIMIT_REDIS_TLS_CA_FILE: gateway.keyFile })).toMatch(
      /^config error: RATE_LIMIT_REDIS_TLS_CA_FILE is invalid: holds no PEM certificate/,
    );
    expect(refused({ ...url, RATE_LIMIT_REDIS_TLS_CERT_FILE: gateway.certFile })).toBe(
      'config error: RATE_LIMIT_REDIS_TLS_KEY_FILE is required: RATE_LIMIT_REDIS_TLS_CERT_FILE is set',
    );
    expect(
      refused({
        ...url,
        RATE_LIMIT_REDIS_TLS_CERT_FILE: gateway.certFile,
        RATE_LIMIT_REDIS_TLS_KEY_FILE: server.keyFile,
      }),
    ).toBe(
      "config error: RATE_LIMIT_REDIS_TLS_KEY_FILE is invalid: not the key of RATE_LIMIT_REDIS_TLS_CERT_FILE's certificate",
    );
    expect(refused({ ...url, RATE_LIMIT_REDIS_TLS_CA_FILE: ca.certFile })).toBe('accepted');
  });
});
