import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { deleteNatsNamespace, testNatsUrl, uniqueNatsPrefix } from '@meridian/testing';
import { BENCH_REQUESTS, deployedGatewayEnv } from '../gateway/deployed-env';
import { freePort, waitHttp, which, wrk } from '../gateway/index';

/**
 * `npm run bench gateway-ab`: the relay's CPU per request of two gateway checkouts, A/B, in one
 * run. Both gateways (as deployed: workers `auto`, request logs on, auth + metering + rate limit)
 * run on one canned upstream (`../gateway/fast-upstream.ts`); wrk drives one at a time, 32
 * connections, windows interleaved (A, B, then B, A, …) so the host's drift falls on both alike,
 * each path reported by its median window. CPU = the gateway's process tree, /proc.
 *
 * `BENCH_AB_ROOTS` = JSON `{ "<name>": "<checkout root>", … }` (e.g. a `git worktree` of the
 * commit before a change, with node_modules linked, and `.`); skipped when unset.
 * `BENCH_AB_ROUNDS` (6), `BENCH_AB_SECONDS` (5 per window).
 */
const ROOT = resolve(__dirname, '..', '..');
const ROUNDS = Number(process.env['BENCH_AB_ROUNDS'] ?? 6);
const SECONDS = Number(process.env['BENCH_AB_SECONDS'] ?? 5);
const TOKEN = 'bench_token_000000000001';
const SLOW_TOKEN = 'bench_token_000000000002';

interface Window {
  rps: number;
  cpuUs: number;
}

/** One wrk window (bench/gateway's runner, 32 connections) with the gateway tree's CPU per request. */
function window(url: string, body: string, seconds: number, pid: number): Window {
  const result = wrk(url, body, 32, seconds, pid);
  return { rps: result.rps, cpuUs: result.cpuUs ?? NaN };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

export async function runBenchmark(): Promise<string> {
  const roots = process.env['BENCH_AB_ROOTS'];
  if (!roots) return 'skipped: set BENCH_AB_ROOTS to {"<name>": "<checkout>", …} (see index.ts)';
  if (!which('wrk')) return 'skipped: wrk is not installed';
  const paths = Object.entries(JSON.parse(roots) as Record<string, string>).map(
    ([name, root]) => [name, resolve(root)] as const,
  );
  const children: ChildProcess[] = [];
  const natsPrefix = uniqueNatsPrefix();
  const start = (args: string[], env: Record<string, string>, cwd = ROOT) => {
    const child = spawn(process.execPath, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    children.push(child);
    return child;
  };
  try {
    const [up, upWs, slow] = [await freePort(), await freePort(), await freePort()];
    const upstream = join(ROOT, 'bench/gateway/fast-upstream.ts');
    start(['-r', '@swc-node/register', upstream, String(up), String(upWs)], {
      HEAD_INTERVAL_MS: '200',
    });
    start(['-r', '@swc-node/register', upstream, String(slow)], { SERVICE_TIME_MS: '1' });
    const { single, batch, cacheHit } = BENCH_REQUESTS;
    await waitHttp(`http://127.0.0.1:${up}/`, single);
    await waitHttp(`http://127.0.0.1:${slow}/`, single);

    const gateways: Array<{ name: string; pid: number; url: string; slowUrl: string }> = [];
    for (const [name, root] of paths) {
      const port = await freePort();
      const child = start(
        ['-r', '@swc-node/register', join(root, 'apps/rpc-gateway/src/main.ts')],
        deployedGatewayEnv({
          port,
          grpcPort: await freePort(),
          natsUrl: testNatsUrl(),
          natsPrefix: `${natsPrefix}_${name}`,
          upstreams: {
            'eth-mainnet': [{ http: `http://127.0.0.1:${up}/`, ws: `ws://127.0.0.1:${upWs}/` }],
            'eth-sepolia': [`http://127.0.0.1:${slow}/`],
          },
          tokens: [
            { token: TOKEN, accountId: 'ab-1', network: 'eth-mainnet' },
            { token: SLOW_TOKEN, accountId: 'ab-2', network: 'eth-sepolia' },
          ],
        }),
        root,
      );
      const url = `http://127.0.0.1:${port}/${TOKEN}/`;
      const slowUrl = `http://127.0.0.1:${port}/${SLOW_TOKEN}/`;
      await waitHttp(url, single);
      await waitHttp(slowUrl, cacheHit);
      gateways.push({ name, pid: child.pid!, url, slowUrl });
    }
    // Warm: a fresh process spends milliseconds per request until V8 has optimised the path.
    for (const g of gateways) {
      window(g.url, single, 8, g.pid);
      window(g.url, batch, 5, g.pid);
      window(g.slowUrl, cacheHit, 3, g.pid);
    }
    const rows = [
      ['single call', 'url', single],
      ['batch of 10', 'url', batch],
      ['cache hit (eth_getBlockByHash)', 'slowUrl', cacheHit],
    ] as const;
    const windows = new Map<string, Window[]>();
    for (let round = 0; round < ROUNDS; round++)
      for (const [row, target, body] of rows)
        for (const g of round % 2 ? [...gateways].reverse() : gateways) {
          const key = `${row}\u0000${g.name}`;
          windows.set(key, [...(windows.get(key) ?? []), window(g[target], body, SECONDS, g.pid)]);
        }
    const names = gateways.map((g) => g.name);
    const lines = [
      `| workload, 32 conns | ${names.map((n) => `${n}: CPU µs/request`).join(' | ')} | ${names.map((n) => `${n}: requests/s`).join(' | ')} | ${names
        .slice(1)
        .map((n) => `${n} / ${names[0]}`)
        .join(' | ')} |`,
      `|---|${names.map(() => '---|').join('')}${names.map(() => '---|').join('')}${names
        .slice(1)
        .map(() => '---|')
        .join('')}`,
    ];
    for (const [row] of rows) {
      const cpu = names.map((n) => median(windows.get(`${row}\u0000${n}`)!.map((w) => w.cpuUs)));
      const rps = names.map((n) => median(windows.get(`${row}\u0000${n}`)!.map((w) => w.rps)));
      lines.push(
        `| ${row} | ${cpu.map((c) => c.toFixed(1)).join(' | ')} | ${rps.map((r) => r.toFixed(0)).join(' | ')} | ${cpu
          .slice(1)
          .map((c) => `${(c / cpu[0]!).toFixed(2)}×`)
          .join(' | ')} |`,
      );
    }
    return `${lines.join('\n')}\n\n${ROUNDS} interleaved windows of ${SECONDS} s per path and workload; medians.`;
  } finally {
    for (const child of children) child.kill('SIGKILL');
    for (const [name] of paths)
      await deleteNatsNamespace(testNatsUrl(), `${natsPrefix}_${name}`).catch(() => undefined);
  }
}
