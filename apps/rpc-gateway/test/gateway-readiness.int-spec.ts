import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { provisionMessaging } from '@meridian/platform-messaging';
import {
  deleteNatsNamespace,
  freePort,
  startAnvil,
  testNatsUrl,
  uniqueNatsPrefix,
  type AnvilInstance,
} from '@meridian/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { metricValue, rpc, startGateway } from './gateway-harness';

/** /readyz names the release, as /healthz (the process's own build info). */
const RELEASE = { version: expect.any(String), commit: expect.any(String) };

/**
 * Readiness is "can this pod serve at all" (ADR 0212): a network whose only node is down, or
 * NATS gone, leaves the pod in its Service, serving; both stay visible as metrics.
 */
const ETH = 'tok_ready_eth_000001';
const POLYGON = 'tok_ready_polygon_01';
const TOKENS = JSON.stringify({
  [ETH]: { accountId: 'acct-ready', network: 'eth-mainnet', planId: 'pro' },
  [POLYGON]: { accountId: 'acct-ready', network: 'polygon-mainnet', planId: 'pro' },
});
const blockNumber = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] };

async function readyz(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/readyz`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function until(what: string, done: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Debian installs nats-server in /usr/sbin, which a non-root PATH may lack. */
function natsServerBinary(): string {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs) {
    try {
      accessSync(join(dir, 'nats-server'), constants.X_OK);
      return join(dir, 'nats-server');
    } catch {
      // not here
    }
  }
  throw new Error('nats-server not found on PATH (apt-get install nats-server)');
}

/** A NATS server of this test's own, so it can be killed under a running gateway. */
function startNats(port: number): ChildProcess {
  return spawn(natsServerBinary(), ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
}

function stopNats(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('rpc-gateway readiness: one network down, NATS down', () => {
  let eth: AnvilInstance;
  let deadPort: number;

  beforeAll(async () => {
    [eth, deadPort] = await Promise.all([startAnvil({ chainId: 1 }), freePort()]);
  });

  afterAll(async () => {
    await eth.stop();
  });

  it("stays ready and serves eth-mainnet while polygon-mainnet's only node is down", async () => {
    const natsPort = await freePort(); // nothing listens: NATS is down too, from the start
    const gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: `nats://127.0.0.1:${natsPort}`,
      NATS_PREFIX: 'ready',
      UPSTREAMS: JSON.stringify({
        'eth-mainnet': [eth.url],
        'polygon-mainnet': [`http://127.0.0.1:${deadPort}`],
      }),
      STATIC_ACCESS_TOKENS: TOKENS,
    });
    try {
      await gateway.runtime.natsCheckNow();
      const ready = await readyz(gateway.url);
      expect(ready).toEqual({
        status: 200,
        body: { status: 'ready', checks: { serving: 'ok' }, ...RELEASE },
      });

      const served = await rpc(`${gateway.url}/${ETH}/`, blockNumber);
      expect(served.status).toBe(200);
      expect(served.json).toMatchObject({ jsonrpc: '2.0', id: 1, result: expect.any(String) });
      // The network that is down answers its own calls with -32000; it takes nothing else down.
      const refused = await rpc(`${gateway.url}/${POLYGON}/`, blockNumber);
      expect(refused.json).toMatchObject({ error: { code: -32000 } });

      // What an alert reads instead of readiness.
      const healthy = (network: string) =>
        metricValue(gateway.url, 'rpc_gateway_upstream_healthy', { network });
      expect(await healthy('eth-mainnet')).toBe(1);
      expect(await healthy('polygon-mainnet')).toBe(0);
      expect(await metricValue(gateway.url, 'nats_connected', {})).toBe(0);
    } finally {
      await gateway.stop();
    }
  });

  it('is not ready once no offered network has a healthy node (its own egress is gone)', async () => {
    const anvil = await startAnvil({ chainId: 137 });
    const gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: `nats://127.0.0.1:${await freePort()}`,
      NATS_PREFIX: 'ready',
      UPSTREAMS: JSON.stringify({
        'eth-mainnet': [`http://127.0.0.1:${deadPort}`],
        'polygon-mainnet': [anvil.url],
      }),
      STATIC_ACCESS_TOKENS: TOKENS,
    });
    try {
      expect((await readyz(gateway.url)).status).toBe(200);
      await anvil.stop();
      await gateway.runtime.healthCheckNow();
      expect(await readyz(gateway.url)).toEqual({
        status: 503,
        body: {
          status: 'not_ready',
          failing: ['serving'],
          checks: {
            serving: 'no healthy upstream for any network (eth-mainnet, polygon-mainnet)',
          },
          ...RELEASE,
        },
      });
    } finally {
      await gateway.stop();
      await anvil.stop();
    }
  });

  it('stays ready and serves while its NATS goes away, and reports it', async () => {
    const natsPort = await freePort();
    let nats = startNats(natsPort);
    const gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: `nats://127.0.0.1:${natsPort}`,
      NATS_PREFIX: 'ready',
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [eth.url] }),
      STATIC_ACCESS_TOKENS: TOKENS,
    });
    const natsConnected = async () => {
      await gateway.runtime.natsCheckNow();
      return (await metricValue(gateway.url, 'nats_connected', {})) === 1;
    };
    try {
      await until('the gateway connected to NATS', natsConnected);

      await stopNats(nats);
      await until('nats_connected 0', async () => !(await natsConnected()));
      expect(await readyz(gateway.url)).toEqual({
        status: 200,
        body: { status: 'ready', checks: { serving: 'ok' }, ...RELEASE },
      });
      const served = await rpc(`${gateway.url}/${ETH}/`, blockNumber);
      expect(served.status).toBe(200);
      expect(served.json).toMatchObject({ result: expect.any(String) });

      // Back on the same port: the client reconnects by itself and the gauge follows.
      nats = startNats(natsPort);
      await until('nats_connected 1 again', natsConnected, 30_000);
    } finally {
      await gateway.stop();
      await stopNats(nats);
    }
  });

  it("reports its two KV copies (balance state, revoked credentials) like every app's mirrors", async () => {
    // A prefix nothing provisioned: the buckets the gateway copies are missing (QA M3).
    const natsUrl = testNatsUrl();
    const prefix = uniqueNatsPrefix();
    const gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: natsUrl,
      NATS_PREFIX: prefix,
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [eth.url] }),
      // Tokens from billing-ledger (none listens: no call is made here), so the feeds run.
      BILLING_GRPC_URL: `127.0.0.1:${deadPort}`,
      GRPC_ENABLED: 'false',
    });
    const loaded = async (bucket: string): Promise<number | undefined> => {
      const text = await (await fetch(`${gateway.url}/metrics`)).text();
      const line = text
        .split('\n')
        .find(
          (l) => l.startsWith('messaging_kv_mirror_loaded{') && l.includes(`bucket="${bucket}"`),
        );
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    const buckets = ['billing-balance-state', 'billing-revoked-credentials'];
    try {
      await until('nats_connected 1', async () => {
        await gateway.runtime.natsCheckNow();
        return (await metricValue(gateway.url, 'nats_connected', {})) === 1;
      });
      // Reached NATS, but not its buckets: the series exist and read 0, what the alert reads;
      // /readyz stays as it is for every app's mirrors (ADR 0212 amendment).
      for (const bucket of buckets) expect(await loaded(bucket)).toBe(0);
      expect((await readyz(gateway.url)).status).toBe(200);

      const nc = await connect({ servers: natsUrl });
      try {
        await provisionMessaging(await jetstreamManager(nc), prefix);
      } finally {
        await nc.close();
      }
      await until('both mirrors loaded', async () =>
        (await Promise.all(buckets.map(loaded))).every((v) => v === 1),
      );
    } finally {
      await gateway.stop();
      await deleteNatsNamespace(natsUrl, prefix).catch(() => undefined);
    }
  });
});
