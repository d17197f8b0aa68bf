import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  createReadStream,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { createInterface } from 'node:readline';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { provisionMessaging } from '@meridian/platform-messaging';
import { deleteNatsNamespace, testNatsUrl, uniqueNatsPrefix } from '@meridian/testing';
import { BENCH_REQUESTS, deployedGatewayEnv, GATEWAY_NODE_OPTIONS } from './deployed-env';

/**
 * Gateway benchmark (bench/README.md "gateway"): a fast local upstream reached directly,
 * through nginx proxy_pass and through rpc-gateway (auth, metering, rate limiting on), measured
 * with wrk in one run; plus a cache-hit workload and 1,000 WebSocket subscribers of newHeads.
 * Everything on loopback; every load phase is time-bounded.
 */
const ROOT = join(__dirname, '..', '..');
const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 5);
/**
 * Fixed-rate (p99) rows: each path runs RATE_ROUNDS windows of RATE_DURATION_S, interleaved with
 * the other paths of its row, and is reported by its median window. One 15 s window per path let
 * a single stall of this host (all processes stopped for 5–26 ms at once, seen by the event-loop
 * monitors of generator, upstream and gateway together) decide a path's p99 (bench/README).
 */
const RATE_DURATION_S = Number(process.env['BENCH_RATE_DURATION_S'] ?? 3);
const RATE_ROUNDS = Number(process.env['BENCH_RATE_ROUNDS'] ?? 5);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 32);
const WARMUP_S = Number(process.env['BENCH_GATEWAY_WARMUP_S'] ?? 10);
const TOKEN = 'bench_token_000000000001';
/** Token of the network whose upstream takes SERVICE_TIME_MS per call (cache-hit comparison). */
const SLOW_TOKEN = 'bench_token_000000000002';
const SERVICE_TIME_MS = Number(process.env['BENCH_SERVICE_TIME_MS'] ?? 1);
/** Another checkout's gateway (e.g. the previous commit) for before/after runs. */
const GATEWAY_ROOT = process.env['BENCH_GATEWAY_ROOT'] ?? ROOT;
/** Processes per side, as each is deployed: nginx `worker_processes`, the gateway's GATEWAY_WORKERS. */
const NGINX_WORKERS = process.env['BENCH_NGINX_WORKERS'] ?? 'auto';
const GATEWAY_WORKERS = process.env['BENCH_GATEWAY_WORKERS'] ?? 'auto';
/** The V8 setting the Kubernetes deployment gives the gateway (deploy/base/rpc-gateway). */

export interface Result {
  rps: number;
  p50: number;
  p99: number;
  /** CPU time (user + system, all threads) the serving process spent per answered request. */
  cpuUs?: number;
}

/** CPU seconds used so far by a process (Linux /proc; undefined elsewhere). */
export function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks
  } catch {
    return undefined;
  }
}

/** A process and its descendants (nginx's workers, the gateway's worker processes). */
export function processTree(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(' ')
      .filter(Boolean)
      .map(Number);
    return [pid, ...children.flatMap(processTree)];
  } catch {
    return [pid];
  }
}

/** CPU seconds used so far by a process and its descendants. */
export function treeCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  let total = 0;
  for (const p of processTree(pid)) total += cpuSeconds(p) ?? 0;
  return total;
}

/** The command run on one CPU only (taskset execs it: the pid stays the command's). */
function onCpu(cpu: string | undefined, command: string, args: string[]): [string, string[]] {
  return cpu === undefined ? [command, args] : [which('taskset')!, ['-c', cpu, command, ...args]];
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export function which(cmd: string): string | undefined {
  for (const dir of [
    '/usr/sbin',
    '/usr/bin',
    '/usr/local/sbin',
    '/usr/local/bin',
    ...(process.env['PATH'] ?? '').split(':'),
  ]) {
    if (existsSync(join(dir, cmd))) return join(dir, cmd);
  }
  return undefined;
}

export async function waitHttp(url: string, body: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      if (r.status === 200) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

export function wrk(
  url: string,
  body: string,
  connections = CONNECTIONS,
  duration = DURATION_S,
  pid?: number,
  cpu?: string,
): Result {
  const cpuBefore = treeCpuSeconds(pid);
  const dir = mkdtempSync(join(tmpdir(), 'wrk-'));
  const script = join(dir, 'post.lua');
  writeFileSync(
    script,
    `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\nwrk.headers["Content-Type"] = "application/json"\n`,
  );
  const out = spawnSync(
    ...onCpu(cpu, which('wrk')!, [
      '-t1',
      `-c${connections}`,
      `-d${duration}s`,
      '--latency',
      '-s',
      script,
      url,
    ]),
    { encoding: 'utf8', timeout: (duration + 30) * 1000 },
  );
  const text = out.stdout;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? 0);
  const pct = (p: string) => {
    const m = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s)`).exec(text);
    if (!m) return NaN;
    const v = Number(m[1]);
    return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
  };
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(text);
  if (non2xx) throw new Error(`wrk saw ${non2xx[1]} non-2xx answers from ${url}`);
  const cpuAfter = treeCpuSeconds(pid);
  const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? 0);
  const cpuUs =
    cpuBefore !== undefined && cpuAfter !== undefined && requests > 0
      ? ((cpuAfter - cpuBefore) * 1e6) / requests
      : undefined;
  return { rps, p50: pct('50'), p99: pct('99'), cpuUs };
}

export interface RateResult extends Result {
  rate: number;
  achievedRps: number;
  dropped: number;
  errors: number;
  /** How late the generator fired requests (its timer); not counted in the latencies. */
  sendLagP99: number;
  /** Wake-ups of an idle canary process ≥ 5 ms late during the window (stall-monitor.ts). */
  hostStalls: { count: number; maxMs: number; totalMs: number };
}

/** A path's median window (by p99), with drops and errors summed and every window's p99. */
interface RepeatedRate extends RateResult {
  p99s: number[];
}

/**
 * Runs each path's window RATE_ROUNDS times, round-robin (a, b, c, a, b, c, …), so that a stall
 * of the host lands in one window of one path, and reports each path by its median window.
 */
function interleaved<K extends string>(runs: Record<K, () => RateResult>): Record<K, RepeatedRate> {
  const keys = Object.keys(runs) as K[];
  const windows = new Map<K, RateResult[]>(keys.map((k) => [k, []]));
  for (let round = 0; round < RATE_ROUNDS; round++)
    for (const k of keys) windows.get(k)!.push(runs[k]());
  const out = {} as Record<K, RepeatedRate>;
  for (const k of keys) {
    const sorted = [...windows.get(k)!].sort((a, b) => a.p99 - b.p99);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    out[k] = {
      ...median,
      dropped: sorted.reduce((n, w) => n + w.dropped, 0),
      errors: sorted.reduce((n, w) => n + w.errors, 0),
      p99s: windows.get(k)!.map((w) => w.p99),
      hostStalls: {
        count: sorted.reduce((n, w) => n + w.hostStalls.count, 0),
        maxMs: sorted.reduce((m, w) => Math.max(m, w.hostStalls.maxMs), 0),
        totalMs: sorted.reduce((t, w) => t + w.hostStalls.totalMs, 0),
      },
    };
  }
  return out;
}

/** Lines of a file that contain `marker`, read as a stream (the gateway's log outgrows a string). */
async function countLines(path: string, marker: string): Promise<number> {
  let count = 0;
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity }))
    if (line.includes(marker)) count++;
  return count;
}

/** Open-loop load at a fixed rate (fixed-rate.ts, own process); latency from when each request was fired. */
function fixedRate(
  url: string,
  body: string,
  rate: number,
  seconds = RATE_DURATION_S,
  cpu?: string,
): RateResult {
  const out = spawnSync(
    ...onCpu(cpu, process.execPath, [
      '-r',
      '@swc-node/register',
      join(__dirname, 'fixed-rate.ts'),
      url,
      String(rate),
      String(seconds),
      String(CONNECTIONS),
      body,
    ]),
    { cwd: ROOT, encoding: 'utf8', timeout: (seconds + 60) * 1000 },
  );
  const line = out.stdout.trim().split('\n').pop() ?? '';
  try {
    const r = JSON.parse(line) as RateResult;
    return { ...r, rps: r.achievedRps };
  } catch {
    throw new Error(`fixed-rate load on ${url} failed: ${out.stderr}`);
  }
}

export function startChild(
  name: string,
  args: string[],
  env: Record<string, string> = {},
  stdoutFile?: string,
  cwd = ROOT,
  cpu?: string,
): ChildProcess {
  // stdout goes to a file or nowhere: an unread pipe fills up and blocks a process that logs.
  const child = spawn(...onCpu(cpu, process.execPath, args), {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', stdoutFile ? openSync(stdoutFile, 'a') : 'ignore', 'pipe'],
  });
  child.stderr?.on(
    'data',
    (d: Buffer) => process.env['BENCH_VERBOSE'] && process.stderr.write(`[${name}] ${d}`),
  );
  return child;
}

async function subscribers(
  url: string,
  count: number,
  seconds: number,
): Promise<{ delivered: number; p50: number; p99: number; connected: number }> {
  const delays: number[] = [];
  const sockets: WebSocket[] = [];
  let connected = 0;
  for (let i = 0; i < count; i++) {
    const ws = new WebSocket(url);
    sockets.push(ws);
    ws.on('open', () => {
      connected++;
      ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
    });
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as {
        method?: string;
        params?: { result: { timestamp: number } };
      };
      if (m.method === 'eth_subscription') delays.push(Date.now() - m.params!.result.timestamp);
    });
    ws.on('error', () => undefined);
    if (i % 100 === 99) await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, 1_000));
  delays.length = 0;
  await new Promise((r) => setTimeout(r, seconds * 1000));
  sockets.forEach((s) => s.terminate());
  delays.sort((a, b) => a - b);
  const at = (q: number) =>
    delays[Math.min(delays.length - 1, Math.floor(q * delays.length))] ?? NaN;
  return { delivered: delays.length, p50: at(0.5), p99: at(0.99), connected };
}

export async function runBenchmark(): Promise<string> {
  if (!which('nginx')) return 'skipped: nginx is not installed (apt-get install -y nginx)';
  if (!which('wrk')) return 'skipped: wrk is not installed (apt-get install -y wrk)';
  const children: ChildProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const upstreamPort = await freePort();
    const upstreamWsPort = await freePort();
    children.push(
      startChild(
        'upstream',
        [
          '-r',
          '@swc-node/register',
          join(__dirname, 'fast-upstream.ts'),
          String(upstreamPort),
          String(upstreamWsPort),
        ],
        { HEAD_INTERVAL_MS: '200' },
      ),
    );
    // Same canned answers after a fixed service time: a real node does work per call, and a
    // cache hit is only "faster than the upstream" against an upstream that takes any time.
    const slowPort = await freePort();
    children.push(
      startChild(
        'slow-upstream',
        ['-r', '@swc-node/register', join(__dirname, 'fast-upstream.ts'), String(slowPort)],
        { SERVICE_TIME_MS: String(SERVICE_TIME_MS) },
      ),
    );
    const [upstreamPid, slowPid] = [children[0]?.pid, children[1]?.pid];
    const upstream = `http://127.0.0.1:${upstreamPort}/`;
    const slowUpstream = `http://127.0.0.1:${slowPort}/`;
    const { single, batch, cacheHit } = BENCH_REQUESTS;
    await waitHttp(upstream, single);
    await waitHttp(slowUpstream, single);

    const dir = mkdtempSync(join(tmpdir(), 'bench-nginx-'));
    const startNginx = async (workers: string, toPort: number, cpu?: string) => {
      const port = await freePort();
      const own = mkdtempSync(join(dir, 'nginx-'));
      writeFileSync(
        join(own, 'nginx.conf'),
        `worker_processes ${workers};\npid ${own}/nginx.pid;\nerror_log ${own}/error.log warn;\ndaemon off;\nevents { worker_connections 4096; }\nhttp {\n access_log off;\n client_body_temp_path ${own}/body; proxy_temp_path ${own}/proxy; fastcgi_temp_path ${own}/fcgi; uwsgi_temp_path ${own}/uwsgi; scgi_temp_path ${own}/scgi;\n upstream node { server 127.0.0.1:${toPort}; keepalive 128; }\n server { listen 127.0.0.1:${port}; location / { proxy_pass http://node/; proxy_http_version 1.1; proxy_set_header Connection ""; } }\n}\n`,
      );
      const nginx = spawn(
        ...onCpu(cpu, which('nginx')!, ['-c', join(own, 'nginx.conf'), '-p', own]),
        {
          stdio: 'ignore',
        },
      );
      children.push(nginx);
      const url = `http://127.0.0.1:${port}/`;
      await waitHttp(url, single);
      return { url, pid: nginx.pid };
    };
    const mainNginx = await startNginx(NGINX_WORKERS, upstreamPort);
    const nginxUrl = mainNginx.url;
    const nginxWorkerPid = mainNginx.pid;

    // Usage events go to a real JetStream namespace of their own (metering on, as in production).
    const natsUrl = testNatsUrl();
    const natsPrefix = uniqueNatsPrefix();
    try {
      const nc = await connect({ servers: natsUrl, timeout: 2_000 });
      await provisionMessaging(await jetstreamManager(nc), natsPrefix);
      await nc.close();
      cleanups.push(() => deleteNatsNamespace(natsUrl, natsPrefix).then(() => undefined));
    } catch {
      // No NATS: usage publishing fails (cheaply) and is retried; the hot path is unaffected.
    }
    const gatewayLog = join(dir, 'gateway.log');
    /** The gateway as deployed (own process tree, production logging to a file). */
    const startGateway = async (env: Record<string, string>, cpu?: string) => {
      const port = await freePort();
      children.push(
        startChild(
          'gateway',
          ['-r', '@swc-node/register', join(GATEWAY_ROOT, 'apps/rpc-gateway/src/main.ts')],
          {
            // Production logging (one info line per request) goes to a file, as a log shipper
            // reads it; auth, metering and rate limiting stay on.
            ...deployedGatewayEnv({
              port,
              grpcPort: await freePort(),
              natsUrl,
              natsPrefix,
              upstreams: {
                'eth-mainnet': [{ http: upstream, ws: `ws://127.0.0.1:${upstreamWsPort}/` }],
                'eth-sepolia': [slowUpstream],
              },
              tokens: [
                { token: TOKEN, accountId: 'bench-account', network: 'eth-mainnet' },
                { token: SLOW_TOKEN, accountId: 'bench-account-2', network: 'eth-sepolia' },
              ],
            }),
            ...env,
          },
          gatewayLog,
          GATEWAY_ROOT,
          cpu,
        ),
      );
      const pid = children[children.length - 1]?.pid;
      const url = `http://127.0.0.1:${port}/${TOKEN}/`;
      await waitHttp(url, single);
      await waitHttp(`http://127.0.0.1:${port}/${SLOW_TOKEN}/`, single);
      return { port, pid, url };
    };
    const gw = await startGateway({ GATEWAY_WORKERS });
    const gatewayPort = gw.port;
    const gatewayUrl = gw.url;
    const gatewaySlowUrl = `http://127.0.0.1:${gatewayPort}/${SLOW_TOKEN}/`;
    const gatewayPid = gw.pid;
    // Start-up work is over, and the process is warm, before measuring: a freshly started
    // gateway spends 2–4 ms CPU per request for its first few thousand requests (V8 still
    // interpreting/optimizing the relay, undici and node:http paths; measured with /proc CPU
    // time), then settles. Production replicas are long-lived, so the warm state is measured.
    await new Promise((r) => setTimeout(r, 3_000));
    wrk(gatewayUrl, single, CONNECTIONS, WARMUP_S);
    wrk(gatewayUrl, batch, CONNECTIONS, Math.ceil(WARMUP_S / 2));
    const loadBefore = loadavg();

    const barePort = await freePort();
    children.push(
      startChild('bare-proxy', [
        '-r',
        '@swc-node/register',
        join(__dirname, 'bare-proxy.ts'),
        String(barePort),
        upstream,
      ]),
    );
    const barePid = children[children.length - 1]?.pid;
    const bareUrl = `http://127.0.0.1:${barePort}/`;
    await waitHttp(bareUrl, single);
    // Calibration: the same gateway as one process with upstream batching off, so what several
    // processes (ADR 0204) and upstream batching (ADR 0205) add shows against the row above.
    const plain = await startGateway({ GATEWAY_WORKERS: '1', UPSTREAM_BATCH_MAX: '1' });
    wrk(plain.url, single, CONNECTIONS, WARMUP_S);

    const rows: string[] = [];
    const fmt = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
    const measure = (label: string, body: string) => {
      wrk(upstream, body, CONNECTIONS, 1); // warm-up
      const direct = wrk(upstream, body, CONNECTIONS, DURATION_S, upstreamPid);
      wrk(nginxUrl, body, CONNECTIONS, 1);
      const viaNginx = wrk(nginxUrl, body, CONNECTIONS, DURATION_S, nginxWorkerPid);
      wrk(gatewayUrl, body, CONNECTIONS, 1);
      const viaGateway = wrk(gatewayUrl, body, CONNECTIONS, DURATION_S, gatewayPid);
      for (const [name, r] of [
        ['direct upstream', direct],
        ['nginx proxy_pass', viaNginx],
        ['rpc-gateway', viaGateway],
      ] as const) {
        rows.push(
          `| ${label} | ${name} | ${fmt(r.rps, 0)} | ${fmt(r.rps / viaNginx.rps)}× | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.cpuUs ?? NaN, 0)} |`,
        );
      }
      return { direct, viaNginx, viaGateway };
    };
    const singles = measure(`single call, ${CONNECTIONS} conns`, single);
    wrk(bareUrl, single, CONNECTIONS, 1);
    const bare = wrk(bareUrl, single, CONNECTIONS, DURATION_S, barePid);
    rows.push(
      `| single call, ${CONNECTIONS} conns | bare Node proxy (calibration: node:http + undici, no checks) | ${fmt(bare.rps, 0)} | ${fmt(bare.rps / singles.viaNginx.rps)}× | ${fmt(bare.p50)} | ${fmt(bare.p99)} | ${fmt(bare.cpuUs ?? NaN, 0)} |`,
    );
    wrk(plain.url, single, CONNECTIONS, 1);
    const plainRun = wrk(plain.url, single, CONNECTIONS, DURATION_S, plain.pid);
    rows.push(
      `| single call, ${CONNECTIONS} conns | rpc-gateway, 1 process, upstream batching off (calibration) | ${fmt(plainRun.rps, 0)} | ${fmt(plainRun.rps / singles.viaNginx.rps)}× | ${fmt(plainRun.p50)} | ${fmt(plainRun.p99)} | ${fmt(plainRun.cpuUs ?? NaN, 0)} |`,
    );
    measure(`batch of 10, ${CONNECTIONS} conns`, batch);
    // Half load: an open-loop generator at 50% of the gateway's single-call maximum measured
    // above, the same rate for every path; added latency = gateway p99 − direct p99.
    const half = Math.max(100, Math.round(singles.viaGateway.rps / 2 / 50) * 50);
    const rateRow = (label: string, name: string, r: RepeatedRate, nginxRps: number) =>
      `| ${label} | ${name} | ${fmt(r.rps, 0)} | ${fmt(r.rps / nginxRps)}× | ${fmt(r.p50)} | ${fmt(r.p99)} | p99 by window ${r.p99s.map((x) => fmt(x)).join(' / ')}; host stalls ≥ 5 ms: ${r.hostStalls.count}${r.hostStalls.count > 0 ? ` (longest ${fmt(r.hostStalls.maxMs, 0)} ms)` : ''}${r.dropped + r.errors > 0 ? `; ${r.dropped} dropped, ${r.errors} errors` : ''} |`;
    /** Direct, nginx and gateway at one fixed rate; rows added, results returned. */
    const atRate = (rate: number, label: string) => {
      const r = interleaved({
        direct: () => fixedRate(upstream, single, rate),
        nginx: () => fixedRate(nginxUrl, single, rate),
        gateway: () => fixedRate(gatewayUrl, single, rate),
        // What one Node process relaying with no checks at all adds at the same rate: the
        // runtime's own tail (node:http, undici, GC), apart from the gateway's work.
        bare: () => fixedRate(bareUrl, single, rate),
      });
      const name = `single call, fixed ${rate}/s (${label})`;
      rows.push(rateRow(name, 'direct upstream', r.direct, r.nginx.rps));
      rows.push(rateRow(name, 'nginx proxy_pass', r.nginx, r.nginx.rps));
      rows.push(rateRow(name, 'rpc-gateway', r.gateway, r.nginx.rps));
      rows.push(rateRow(name, 'bare Node proxy (calibration)', r.bare, r.nginx.rps));
      return r;
    };
    const atHalf = atRate(half, 'half load');
    // A tenth of the maximum: what each path adds when the 2 cores are not also saturated by the
    // generator, the upstream and the path itself (the half-load rows are, on this machine).
    const tenth = Math.max(100, Math.round(singles.viaGateway.rps / 10 / 50) * 50);
    const atTenth = atRate(tenth, 'a tenth of max');

    // Cache hits: eth_getBlockByHash answered from memory vs a node taking SERVICE_TIME_MS.
    wrk(gatewaySlowUrl, cacheHit, CONNECTIONS, 1); // warm-up (and fills the cache)
    const cacheDirect = wrk(slowUpstream, cacheHit, CONNECTIONS, DURATION_S, slowPid);
    const cacheGateway = wrk(gatewaySlowUrl, cacheHit, CONNECTIONS, DURATION_S, gatewayPid);
    const cacheLabel = `eth_getBlockByHash, ${CONNECTIONS} conns, node ${SERVICE_TIME_MS} ms/call`;
    rows.push(
      `| ${cacheLabel} | direct upstream | ${fmt(cacheDirect.rps, 0)} | ${fmt(cacheDirect.rps / singles.viaNginx.rps)}× | ${fmt(cacheDirect.p50)} | ${fmt(cacheDirect.p99)} | ${fmt(cacheDirect.cpuUs ?? NaN, 0)} |`,
    );
    rows.push(
      `| ${cacheLabel} | rpc-gateway (cache hits) | ${fmt(cacheGateway.rps, 0)} | ${fmt(cacheGateway.rps / singles.viaNginx.rps)}× | ${fmt(cacheGateway.p50)} | ${fmt(cacheGateway.p99)} | ${fmt(cacheGateway.cpuUs ?? NaN, 0)} |`,
    );
    const cacheRate = half;
    const cacheAtRate = interleaved({
      direct: () => fixedRate(slowUpstream, cacheHit, cacheRate),
      gateway: () => fixedRate(gatewaySlowUrl, cacheHit, cacheRate),
    });
    const cacheRateLabel = `eth_getBlockByHash, fixed ${cacheRate}/s, node ${SERVICE_TIME_MS} ms/call`;
    rows.push(rateRow(cacheRateLabel, 'direct upstream', cacheAtRate.direct, singles.viaNginx.rps));
    rows.push(
      rateRow(
        cacheRateLabel,
        'rpc-gateway (cache hits)',
        cacheAtRate.gateway,
        singles.viaNginx.rps,
      ),
    );

    // Latency with the system under test on a core of its own: on 2 shared cores the load
    // generator and the upstream compete with the proxy, and the tail measures the scheduler.
    // wrk, the generator and an upstream on CPU 0; nginx (1 worker) or the gateway
    // (GATEWAY_WORKERS=auto, so one worker on one CPU) on CPU 1; half load = half of the pinned
    // gateway's maximum. Skipped without taskset or a second CPU.
    let pinned:
      | { half: number; direct: RepeatedRate; nginx: RepeatedRate; gateway: RepeatedRate }
      | undefined;
    if (which('taskset') && cpus().length >= 2) {
      const port = await freePort();
      children.push(
        startChild(
          'pinned-upstream',
          ['-r', '@swc-node/register', join(__dirname, 'fast-upstream.ts'), String(port)],
          {},
          undefined,
          ROOT,
          '0',
        ),
      );
      const pinnedUpstream = `http://127.0.0.1:${port}/`;
      await waitHttp(pinnedUpstream, single);
      const pinnedNginx = await startNginx('1', port, '1');
      const pinnedGateway = await startGateway(
        {
          GATEWAY_WORKERS,
          UPSTREAMS: JSON.stringify({
            'eth-mainnet': [pinnedUpstream],
            'eth-sepolia': [slowUpstream],
          }),
        },
        '1',
      );
      wrk(pinnedGateway.url, single, CONNECTIONS, WARMUP_S, undefined, '0');
      const max = {
        direct: wrk(pinnedUpstream, single, CONNECTIONS, DURATION_S, undefined, '0'),
        nginx: wrk(pinnedNginx.url, single, CONNECTIONS, DURATION_S, undefined, '0'),
        gateway: wrk(pinnedGateway.url, single, CONNECTIONS, DURATION_S, undefined, '0'),
      };
      const pinnedHalf = Math.max(100, Math.round(max.gateway.rps / 2 / 50) * 50);
      pinned = {
        half: pinnedHalf,
        ...interleaved({
          direct: () => fixedRate(pinnedUpstream, single, pinnedHalf, RATE_DURATION_S, '0'),
          nginx: () => fixedRate(pinnedNginx.url, single, pinnedHalf, RATE_DURATION_S, '0'),
          gateway: () => fixedRate(pinnedGateway.url, single, pinnedHalf, RATE_DURATION_S, '0'),
        }),
      };
      const maxLabel = `single call, ${CONNECTIONS} conns, pinned (path on CPU 1, wrk + upstream on CPU 0)`;
      for (const [name, r] of [
        ['direct upstream', max.direct],
        ['nginx proxy_pass (1 worker)', max.nginx],
        ['rpc-gateway (1 worker)', max.gateway],
      ] as const)
        rows.push(
          `| ${maxLabel} | ${name} | ${fmt(r.rps, 0)} | ${fmt(r.rps / max.nginx.rps)}× | ${fmt(r.p50)} | ${fmt(r.p99)} | |`,
        );
      const halfLabel = `single call, fixed ${pinnedHalf}/s (half load), pinned (path on CPU 1, generator + upstream on CPU 0)`;
      rows.push(rateRow(halfLabel, 'direct upstream', pinned.direct, pinned.nginx.rps));
      rows.push(rateRow(halfLabel, 'nginx proxy_pass (1 worker)', pinned.nginx, pinned.nginx.rps));
      rows.push(rateRow(halfLabel, 'rpc-gateway (1 worker)', pinned.gateway, pinned.nginx.rps));
    }

    const ws = await subscribers(`ws://127.0.0.1:${gatewayPort}/${TOKEN}/`, 1_000, DURATION_S);
    const loadAfter = loadavg();
    const logLines = await countLines(gatewayLog, '"rpc request"');

    const ratio = singles.viaGateway.rps / singles.viaNginx.rps;
    const added = atHalf.gateway.p99 - atHalf.direct.p99;
    const addedAtTenth = atTenth.gateway.p99 - atTenth.direct.p99;
    const addedPinned = pinned && pinned.gateway.p99 - pinned.direct.p99;
    const nginxAdded = (r: { nginx: RateResult; direct: RateResult }) =>
      fmt(r.nginx.p99 - r.direct.p99);
    const bareAdded = (r: { bare: RateResult; direct: RateResult }) =>
      fmt(r.bare.p99 - r.direct.p99);
    const cacheFaster =
      cacheAtRate.gateway.p50 < cacheAtRate.direct.p50 &&
      cacheAtRate.gateway.p99 < cacheAtRate.direct.p99;
    const la = (l: number[]) => l.map((x) => x.toFixed(1)).join(' / ');
    const lags = [
      ...Object.values(atHalf),
      ...Object.values(atTenth),
      ...Object.values(cacheAtRate),
      ...(pinned ? [pinned.direct, pinned.nginx, pinned.gateway] : []),
    ].map((r) => r.sendLagP99);
    return [
      `wrk, 1 thread, ${CONNECTIONS} connections, ${DURATION_S} s per run (closed loop: max throughput); fixed-rate rows: bench/gateway/fixed-rate.ts (open loop on raw sockets, ${CONNECTIONS} connections, ${RATE_ROUNDS} windows of ${RATE_DURATION_S} s per path, interleaved with the other paths of the row, each path reported by its median window (by p99; drops summed), latency from the moment the generator fired each request, queued or sent, 1 s unrecorded warm-up; its own 1 ms timer lag, p99 ${fmt(Math.min(...lags))}–${fmt(Math.max(...lags))} ms over these rows, is not counted). Upstream = canned-JSON server on raw sockets (own process), instant except in the cache rows (${SERVICE_TIME_MS} ms per call); nginx worker_processes ${NGINX_WORKERS} with upstream keepalive; gateway = apps/rpc-gateway/src/main.ts with GATEWAY_WORKERS=${GATEWAY_WORKERS} and NODE_OPTIONS=${GATEWAY_NODE_OPTIONS} as deployed (own process tree; upstream batching at its default; auth + metering + rate limit on, request logs on: ${logLines} request lines written; warmed up with ${WARMUP_S} s of single calls and ${Math.ceil(WARMUP_S / 2)} s of batches before measuring). Ratios are to nginx in the same workload (cache rows: to nginx single calls). Latencies in ms. Load average (1/5/15 min) before: ${la(loadBefore)}, after: ${la(loadAfter)} on ${cpus().length} cores.`,
      '',
      '| workload | path | requests/s | ratio to nginx | p50 ms | p99 ms | CPU µs/request |',
      '|---|---|---|---|---|---|---|',
      ...rows,
      '',
      `1,000 WebSocket subscribers of newHeads (one shared upstream subscription, a head every 200 ms): ${ws.connected} connected, ${ws.delivered} notifications in ${DURATION_S} s, delivery delay p50 ${fmt(ws.p50, 0)} ms, p99 ${fmt(ws.p99, 0)} ms.`,
      '',
      `Gateway single-call throughput relative to the bare Node proxy (same run): ${fmt(singles.viaGateway.rps / bare.rps)}×. CPU per request is the serving processes' CPU time (all threads of the process and its children, /proc: nginx master + workers, gateway primary + workers) divided by the requests wrk counted: it depends far less on other jobs than requests/s does; 10⁶ ÷ it is what one dedicated core would serve.`,
      '',
      `Targets: single-call throughput ≥ 0.5× nginx → ${fmt(ratio)}× (${ratio >= 0.5 ? 'met' : 'not met'}); p99 added latency at half load < 2 ms → ${pinned && addedPinned !== undefined ? `pinned, ${pinned.half}/s: ${fmt(addedPinned)} ms (${addedPinned < 2 ? 'met' : 'not met'}; nginx adds ${nginxAdded(pinned)} ms); ` : ''}all on 2 shared cores, ${half}/s: ${fmt(added)} ms (${added < 2 ? 'met' : 'not met'}; nginx adds ${nginxAdded(atHalf)} ms, the bare Node proxy ${bareAdded(atHalf)} ms; at ${tenth}/s the gateway adds ${fmt(addedAtTenth)} ms, nginx ${nginxAdded(atTenth)} ms, the bare Node proxy ${bareAdded(atTenth)} ms); cache hits faster than the direct upstream (p50 and p99 at ${cacheRate}/s) → ${cacheFaster ? 'met' : 'not met'}.`,
    ].join('\n');
  } finally {
    for (const child of children.reverse()) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}
