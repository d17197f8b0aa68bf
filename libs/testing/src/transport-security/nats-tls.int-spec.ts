import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, nkeys, type NatsConnection } from '@nats-io/transport-node';
import {
  NatsClient,
  natsConnectOptions,
  type NatsConnectionSettings,
} from '@meridian/platform-messaging';
import { freePort } from '../free-port';
import { TestPki, type TestCa, type TestIdentity } from '../test-pki';

/**
 * Our NATS client against a second, real nats-server (not the shared one on 4222) with
 * authentication and TLS of a private CA: it connects with the right settings and fails with
 * a clear error with wrong ones.
 */

const NATS_SERVER = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';

let pki: TestPki;
let ca: TestCa;
let otherCa: TestCa;
let serverId: TestIdentity;
let clientId: TestIdentity;
const servers: ChildProcess[] = [];

/** Starts nats-server with `conf` (its `listen` filled in) and resolves once it is ready. */
async function startNats(name: string, conf: (port: number) => string): Promise<number> {
  const port = await freePort();
  const file = pki.file(`${name}.conf`, conf(port));
  const child = spawn(NATS_SERVER, ['-c', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  servers.push(child);
  let log = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('Server is ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`nats-server exited ${code}: ${log}`)));
  });
  return port;
}

/**
 * The connect timeout of the cases that expect an answer (connected, or refused with a reason):
 * generous, since a refusal comes at once and a loaded CI machine made TLS handshakes miss 3 s.
 */
const CONNECT_TIMEOUT_MS = 10_000;

async function connectError(settings: NatsConnectionSettings): Promise<string> {
  try {
    const nc = await connect({ ...natsConnectOptions(settings), timeout: CONNECT_TIMEOUT_MS });
    await nc.close();
    return 'connected';
  } catch (error) {
    return (error as Error).message;
  }
}

/** Connects, round-trips a request to itself, closes: the connection works. */
async function roundTrip(settings: NatsConnectionSettings): Promise<string> {
  const nc = await connect({ ...natsConnectOptions(settings), timeout: CONNECT_TIMEOUT_MS });
  try {
    const sub = nc.subscribe('echo', {
      callback: (_e, m) => {
        m.respond(m.data);
      },
    });
    const answer = await nc.request('echo', 'hello', { timeout: 2_000 });
    sub.unsubscribe();
    return answer.string();
  } finally {
    await nc.close();
  }
}

/** The connection's status events from now on, and a wait for the next one of a type. */
function statuses(nc: NatsConnection) {
  const seen: string[] = [];
  const waiting: { type: string; resolve: () => void }[] = [];
  void (async () => {
    for await (const status of nc.status()) {
      seen.push(status.type);
      for (const waiter of waiting.splice(0))
        if (waiter.type === status.type) waiter.resolve();
        else waiting.push(waiter);
    }
  })();
  const next = (type: string) => new Promise<void>((resolve) => waiting.push({ type, resolve }));
  return { seen, next };
}

/** Forces a reconnect and waits until its first attempt is refused (no `reconnect` event). */
async function refusedReconnect(nc: NatsConnection): Promise<void> {
  const { seen, next } = statuses(nc);
  const attempt = next('reconnecting');
  await nc.reconnect();
  await attempt;
  await next('disconnect');
  expect(seen).not.toContain('reconnect');
}

/** Waits for a later attempt to connect, then round-trips a request over it. */
async function reconnected(nc: NatsConnection): Promise<void> {
  await statuses(nc).next('reconnect');
  const sub = nc.subscribe('echo', { callback: (_e, m) => void m.respond(m.data) });
  expect((await nc.request('echo', 'hello', { timeout: 2_000 })).string()).toBe('hello');
  sub.unsubscribe();
}

beforeAll(async () => {
  pki = new TestPki();
  ca = await pki.ca('nats test CA');
  otherCa = await pki.ca('other CA');
  serverId = await ca.issue('nats', ['nats', 'localhost', '127.0.0.1']);
  clientId = await ca.issue('billing-ledger');
});

afterAll(async () => {
  for (const child of servers) {
    if (child.exitCode !== null) continue;
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
  pki?.remove();
});

describe('user and password, over TLS with a private CA', () => {
  let port: number;
  beforeAll(async () => {
    port = await startNats(
      'userpass',
      (p) => `
        listen: 127.0.0.1:${p}
        tls { cert_file: "${serverId.certFile}", key_file: "${serverId.keyFile}" }
        authorization { users: [ { user: ledger, password: "s3cret/pw" } ] }
      `,
    );
  });

  const url = (userinfo: string) => `tls://${userinfo}@127.0.0.1:${port}`;

  it('connects with the user and password of NATS_URL and the CA of NATS_TLS_CA_FILE', async () => {
    await expect(
      roundTrip({ url: url('ledger:s3cret%2Fpw'), tls: { caFile: ca.certFile } }),
    ).resolves.toBe('hello');
  });

  it('nats.js alone drops a URL user and password (why NatsClient passes them itself)', async () => {
    const message = await connect({
      servers: url('ledger:s3cret%2Fpw'),
      tls: { caFile: ca.certFile },
      timeout: CONNECT_TIMEOUT_MS,
    }).then(
      (nc) => nc.close().then(() => 'connected'),
      (error: Error) => error.message,
    );
    expect(message).toMatch(/authorization violation/i);
  });

  it('fails with "Authorization Violation" for a wrong password', async () => {
    expect(await connectError({ url: url('ledger:wrong'), tls: { caFile: ca.certFile } })).toMatch(
      /authorization violation/i,
    );
  });

  it('fails naming the certificate without the CA, or with another CA', async () => {
    expect(await connectError({ url: url('ledger:s3cret%2Fpw') })).toMatch(/certificate/i);
    expect(
      await connectError({ url: url('ledger:s3cret%2Fpw'), tls: { caFile: otherCa.certFile } }),
    ).toMatch(/certificate/i);
  });

  it('NatsClient: connected and ready with the right settings', async () => {
    const client = new NatsClient({
      url: url('ledger:s3cret%2Fpw'),
      tls: { caFile: ca.certFile },
      name: 'tls-test',
    });
    try {
      await client.connection();
      await expect(client.check()).resolves.toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it('NatsClient: not ready with a wrong password, the reason in the readiness check', async () => {
    const client = new NatsClient({
      url: url('ledger:wrong'),
      tls: { caFile: ca.certFile },
      name: 'tls-test-wrong',
      retryDelayMs: 50,
    });
    client.start();
    try {
      // The first attempt fails within the connect timeout; until then the reason is unknown.
      const deadline = Date.now() + 5_000;
      let reason = '';
      while (Date.now() < deadline) {
        reason = await client.check().then(
          () => 'ready',
          (error: Error) => error.message,
        );
        if (reason !== 'not connected') break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(reason).toMatch(/^not connected: .*authorization violation/i);
    } finally {
      await client.close();
    }
  });
});

describe('token', () => {
  let port: number;
  beforeAll(async () => {
    port = await startNats(
      'token',
      (p) => `
        listen: 127.0.0.1:${p}
        authorization { token: "t0ken-of-meridian" }
      `,
    );
  });

  it('takes a token given as the URL user alone', async () => {
    await expect(roundTrip({ url: `nats://t0ken-of-meridian@127.0.0.1:${port}` })).resolves.toBe(
      'hello',
    );
    expect(await connectError({ url: `nats://other-token@127.0.0.1:${port}` })).toMatch(
      /authorization violation/i,
    );
  });
});

describe('NKEY seed file, over mutual TLS (verify: true)', () => {
  let port: number;
  const user = nkeys.createUser();
  const seedFile = () => pki.file('user.nk', new TextDecoder().decode(user.getSeed()) + '\n');
  beforeAll(async () => {
    port = await startNats(
      'nkey-mtls',
      (p) => `
        listen: 127.0.0.1:${p}
        tls {
          cert_file: "${serverId.certFile}"
          key_file: "${serverId.keyFile}"
          ca_file: "${ca.certFile}"
          verify: true
        }
        authorization { users: [ { nkey: ${user.getPublicKey()} } ] }
      `,
    );
  });

  it('connects with the seed and a client certificate of the CA', async () => {
    await expect(
      roundTrip({
        url: `tls://127.0.0.1:${port}`,
        nkeySeedFile: seedFile(),
        tls: { caFile: ca.certFile, certFile: clientId.certFile, keyFile: clientId.keyFile },
      }),
    ).resolves.toBe('hello');
  });

  it('is refused without a client certificate', async () => {
    expect(
      await connectError({
        url: `tls://127.0.0.1:${port}`,
        nkeySeedFile: seedFile(),
        tls: { caFile: ca.certFile },
      }),
    ).not.toBe('connected');
  });

  it('reads the TLS files again at each reconnect: a renewed client certificate needs no restart', async () => {
    // The paths stay, the files are replaced, as a mounted Secret is renewed.
    const certFile = pki.file('renewing.crt', readFileSync(clientId.certFile, 'utf8'));
    const keyFile = pki.file('renewing.key', readFileSync(clientId.keyFile, 'utf8'));
    const replaceWith = (identity: TestIdentity) => {
      pki.file('renewing.crt', readFileSync(identity.certFile, 'utf8'));
      pki.file('renewing.key', readFileSync(identity.keyFile, 'utf8'));
    };
    const nc = await connect({
      ...natsConnectOptions({
        url: `tls://127.0.0.1:${port}`,
        nkeySeedFile: seedFile(),
        tls: { caFile: ca.certFile, certFile, keyFile },
      }),
      // A refused client certificate shows only after the handshake (TLS 1.3): the attempt then
      // waits this long for its PONG before the next one.
      timeout: 2_000,
      reconnectTimeWait: 100,
      maxReconnectAttempts: -1,
    });
    try {
      // A certificate the server does not trust: the reconnect is refused, so the file was read.
      replaceWith(await otherCa.issue('billing-ledger'));
      await refusedReconnect(nc);
      // The renewed certificate of the right CA: a later attempt connects.
      replaceWith(await ca.issue('billing-ledger'));
      await reconnected(nc);
    } finally {
      await nc.close();
    }
  });

  it('reads the seed file again at each reconnect: a rotated NKEY needs no restart', async () => {
    const seed = pki.file('rotating.nk', new TextDecoder().decode(user.getSeed()));
    const nc = await connect({
      ...natsConnectOptions({
        url: `tls://127.0.0.1:${port}`,
        nkeySeedFile: seed,
        tls: { caFile: ca.certFile, certFile: clientId.certFile, keyFile: clientId.keyFile },
      }),
      timeout: 2_000,
      reconnectTimeWait: 100,
      maxReconnectAttempts: -1,
    });
    try {
      // Another user's seed at the same path: the next connection authenticates with it.
      pki.file('rotating.nk', new TextDecoder().decode(nkeys.createUser().getSeed()));
      await refusedReconnect(nc);
      pki.file('rotating.nk', new TextDecoder().decode(user.getSeed()));
      await reconnected(nc);
    } finally {
      await nc.close();
    }
  });

  it('is refused with the seed of another user', async () => {
    const stranger = pki.file(
      'stranger.nk',
      new TextDecoder().decode(nkeys.createUser().getSeed()),
    );
    expect(
      await connectError({
        url: `tls://127.0.0.1:${port}`,
        nkeySeedFile: stranger,
        tls: { caFile: ca.certFile, certFile: clientId.certFile, keyFile: clientId.keyFile },
      }),
    ).toMatch(/authorization violation/i);
  });
});
