import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { provisionMessaging } from '@meridian/platform-messaging';
import { deleteNatsNamespace, testNatsUrl, uniqueNatsPrefix } from '@meridian/testing';
import { freePort, startChild, waitHttp, which, wrk, type RateResult } from '../gateway/index';
import { flatness, flatnessText, renderSoak, SAMPLE_MS, Sampler } from './sampler';
import { BENCH_REQUESTS, deployedGatewayEnv } from '../gateway/deployed-env';

/**
 * Gateway soak (issue 18): the gateway as deployed (`apps/rpc-gateway/src/main.ts`,
 * GATEWAY_WORKERS=auto, NODE_OPTIONS as deploy/base sets it, static tokens, auth + metering +
 * rate limit + request logs on, usage to a JetStream namespace of its own) on the canned
 * upstream of bench/gateway, warmed up, its single-call maximum measured with wrk, then driven at
 * 70 % of that maximum by bench/gateway's open-loop generator for the soak, one window of 60 s
 * per minute, back to back.
 */
const ROOT = join(__dirname, '..', '..');
const SHARE = Number(process.env['SOAK_GATEWAY_SHARE'] ?? 0.7);
const CONNECTIONS = 32;
const TOKEN = 'bench_token_000000000001';
const SINGLE = BENCH_REQUESTS.single;

/** What fixed-rate.ts prints besides bench/gateway's RateResult fields. */
interface WindowResult extends RateResult {
  sent: number;
  /** Requests still unanswered 5 s after the window. */
  unfinished: number;
  max: number;
}

/** One recorded window of fixed-rate.ts (own process, not blocking the sampler). */
function fixedRateWindow(url: string, rate: number, seconds: number): Promise<WindowResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '-r',
        '@swc-node/register',
        join(ROOT, 'bench/gateway/fixed-rate.ts'),
        url,
        String(rate),
        String(seconds),
        String(CONNECTIONS),
        SINGLE,
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', () => {
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as WindowResult);
      } catch {
        reject(new Error(`fixed-rate window failed: ${err}`));
      }
    });
  });
}

export async function soakGateway(minutes: number, log: (line: string) => void): Promise<string> {
  if (!which('wrk')) return '**gateway.** skipped: wrk is not installed (apt-get install -y wrk)';
  const children: ChildProcess[] = [];
  const natsUrl = testNatsUrl();
  const natsPrefix = uniqueNatsPrefix();
  const dir = mkdtempSync(join(tmpdir(), 'soak-gateway-'));
  try {
    const upstreamPort = await freePort();
    children.push(
      startChild('upstream', [
        '-r',
        '@swc-node/register',
        join(ROOT, 'bench/gateway/fast-upstream.ts'),
        String(upstreamPort),
      ]),
    );
    const upstream = `http://127.0.0.1:${upstreamPort}/`;
    await waitHttp(upstream, SINGLE);
    const nc = await connect({ servers: natsUrl, timeout: 2_000 });
    await provisionMessaging(await jetstreamManager(nc), natsPrefix);
    await nc.close();

    const port = await freePort();
    const gateway = startChild(
      'gateway',
      ['-r', '@swc-node/register', join(ROOT, 'apps/rpc-gateway/src/main.ts')],
      deployedGatewayEnv({
        port,
        grpcPort: await freePort(),
        natsUrl,
        natsPrefix,
        upstreams: { 'eth-mainnet': [upstream] },
        tokens: [{ token: TOKEN, accountId: 'soak-account', network: 'eth-mainnet' }],
      }),
      join(dir, 'gateway.log'),
    );
    children.push(gateway);
    const url = `http://127.0.0.1:${port}/${TOKEN}/`;
    await waitHttp(url, SINGLE);
    // Warm (a fresh process spends milliseconds per call until V8 has optimised the relay),
    // then the single-call maximum, as bench/gateway measures it (wrk, 32 connections).
    await new Promise((r) => setTimeout(r, 3_000));
    wrk(url, SINGLE, CONNECTIONS, 10);
    const max = wrk(url, SINGLE, CONNECTIONS, 5);
    const rate = Math.max(100, Math.round((max.rps * SHARE) / 50) * 50);
    log(`gateway soak: max ${max.rps.toFixed(0)}/s, driving ${rate}/s for ${minutes} min`);

    const sampler = new Sampler([gateway.pid!]);
    sampler.start(false);
    const windows: WindowResult[] = [];
    for (let m = 0; m < minutes; m++) {
      // Six samples inside the window's recorded minute (it records from ~2.5 s after spawn).
      const timers = Array.from({ length: 6 }, (_, i) =>
        setTimeout(() => sampler.take(), 3_000 + i * SAMPLE_MS),
      );
      const w = await fixedRateWindow(url, rate, 60);
      timers.forEach(clearTimeout);
      windows.push(w);
      log(
        `gateway soak minute ${m + 1}: ${w.achievedRps.toFixed(0)}/s p99 ${w.p99.toFixed(2)} ms, ` +
          `dropped ${w.dropped}, errors ${w.errors}, RSS ${sampler.samples.at(-1)!.rssMiB.toFixed(0)} MiB`,
      );
    }
    sampler.stop();
    if (gateway.exitCode !== null) throw new Error(`gateway exited (${gateway.exitCode})`);

    const f = flatness(sampler);
    const sent = windows.reduce((n, w) => n + w.sent, 0);
    const errors = windows.reduce((n, w) => n + w.errors, 0);
    const dropped = windows.reduce((n, w) => n + w.dropped, 0);
    const unfinished = windows.reduce((n, w) => n + w.unfinished, 0);
    const rateHeld = windows.every((w) => w.achievedRps >= rate * 0.99);
    const held = errors === 0 && dropped + unfinished <= sent * 0.001 && rateHeld;
    const fmt = (v: number) => v.toFixed(2);
    return renderSoak({
      title: `gateway, ${minutes} min at ${Math.round(SHARE * 100)} % of its maximum`,
      method: `Single-call maximum (wrk, ${CONNECTIONS} connections, 5 s, after 10 s of warm-up): ${max.rps.toFixed(0)}/s; soak rate ${rate}/s, open loop (bench/gateway/fixed-rate.ts, ${CONNECTIONS} connections), one 60 s window per minute (a new generator process each minute: ~1.5 s of start-up and 1 s of unrecorded warm-up between windows).`,
      columns: ['achieved /s', 'p50 ms', 'p99 ms', 'max ms', 'dropped', 'errors'],
      minutes: windows.map((w) => [
        w.achievedRps.toFixed(0),
        fmt(w.p50),
        fmt(w.p99),
        fmt(w.max),
        String(w.dropped + w.unfinished),
        String(w.errors),
      ]),
      sampler,
      processes: `gateway primary + ${f.end.processes - 1} workers`,
      verdict: `Verdict: ${flatnessText(f)}; load **${held ? 'held' : 'NOT held'}**: ${sent.toLocaleString('en')} requests sent, ${errors} errors (must be 0), ${(dropped + unfinished).toLocaleString('en')} dropped or unanswered (${(((dropped + unfinished) / sent) * 100).toFixed(2)} %, ≤ 0.1 %), every minute at ≥ 99 % of the rate: ${rateHeld ? 'yes' : 'no'}.`,
    });
  } finally {
    for (const child of children.reverse()) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await deleteNatsNamespace(natsUrl, natsPrefix).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
