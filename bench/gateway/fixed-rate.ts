import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { MessageSplitter, statusOf } from './http-wire';

/**
 * A small open-loop load generator (wrk2 is not in Debian): sends POSTs at a fixed rate for a
 * fixed time over a bounded set of keep-alive connections and prints one JSON line with the
 * achieved rate and latency percentiles.
 *
 * - Open loop, no coordinated omission: each request's latency runs from the moment the
 *   generator fired it (put it on the wire, or queued it because every connection was busy), so
 *   a stalled server is charged for the requests it delays. The generator fires on a 1 ms timer:
 *   a request is fired up to a timer period after its scheduled time, and that lag
 *   (`sendLagP99`) is the instrument's, not the path's, so it is reported apart and not counted.
 * - Raw sockets and one pre-encoded request (http-wire.ts), one request in flight per
 *   connection: a few µs of CPU per request, so that at a fixed rate the generator takes as
 *   little as it can of the CPUs it shares with the path under test.
 * - The first second runs at the same rate unrecorded (JIT, connection set-up).
 * - Bounded: at most `8 × connections` requests wait for a free connection; beyond that they are
 *   counted as dropped (the target cannot keep up with the rate).
 * - It reports the CPU it used itself in the recorded window (`generatorCpuPct`, % of one core):
 *   on shared cores, the generator's share is part of what the path under test did not get.
 * - A host-stall canary (stall-monitor.ts, own process) runs alongside; the stalls it saw during
 *   the recorded window are reported (`hostStalls`), so a window's tail can be read against them.
 *
 * Run as its own process:
 * `node -r @swc-node/register fixed-rate.ts <url> <rate/s> <seconds> <connections> <body>`.
 */
interface Pending {
  /** When the generator fired the request (its latency runs from here). */
  firedAt: number;
  recorded: boolean;
}

async function main(): Promise<void> {
  const [url, rateText, secondsText, connectionsText, body] = process.argv.slice(2);
  const rate = Number(rateText);
  const seconds = Number(secondsText);
  const connections = Number(connectionsText);
  if (!url || !(rate > 0) || !(seconds > 0) || !(connections > 0) || body === undefined)
    throw new Error('usage: fixed-rate.ts <url> <rate> <seconds> <connections> <body>');
  const target = new URL(url);
  const request = Buffer.from(
    `POST ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  const maxWaiting = connections * 8;
  const latencies: number[] = [];
  const sendLags: number[] = [];
  const waiting: Pending[] = [];
  const idle: Conn[] = [];
  let outstanding = 0;
  let errors = 0;
  let dropped = 0;
  let completed = 0;

  let running = true;

  /**
   * One keep-alive connection, one request in flight. A server may close it (nginx does after
   * `keepalive_requests` answers, saying `Connection: close`): it is then replaced by a new
   * one, as wrk and HTTP clients do, and a request it lost is counted as an error.
   */
  class Conn {
    private readonly splitter = new MessageSplitter();
    private inFlight: Pending | undefined;
    private closing = false;

    constructor(private readonly socket: Socket) {
      socket.setNoDelay(true);
      socket.on('data', (chunk: Buffer) =>
        this.splitter.push(chunk, (m) => {
          if (/\r\nconnection: *close/i.test(m.head)) this.closing = true;
          this.answered(statusOf(m.head));
        }),
      );
      socket.on('error', () => undefined);
      socket.on('close', () => {
        const at = idle.indexOf(this);
        if (at >= 0) idle.splice(at, 1);
        if (this.inFlight) this.answered(0);
        if (running) open().catch(() => undefined);
      });
    }

    send(p: Pending): void {
      this.inFlight = p;
      this.socket.write(request);
    }

    /** Takes the oldest waiting request, or waits in the idle set. */
    ready(): void {
      if (this.closing || this.socket.destroyed) return;
      const next = waiting.shift();
      if (next) this.send(next);
      else idle.push(this);
    }

    private answered(status: number): void {
      const p = this.inFlight;
      this.inFlight = undefined;
      if (!p) return;
      outstanding--;
      if (p.recorded) {
        completed++;
        if (status === 200) latencies.push(performance.now() - p.firedAt);
        else errors++;
      }
      this.ready();
    }
  }

  const open = () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect(Number(target.port || 80), target.hostname, () => {
        new Conn(socket).ready();
        resolve();
      });
      socket.once('error', reject);
    });
  await Promise.all(Array.from({ length: connections }, open));

  const fire = (p: Pending) => {
    const conn = idle.pop();
    if (conn) {
      outstanding++;
      conn.send(p);
    } else if (waiting.length < maxWaiting) {
      outstanding++;
      waiting.push(p);
    } else if (p.recorded) dropped++;
  };

  const monitor = await startStallMonitor();
  const intervalMs = 1000 / rate;
  const warmupMs = 1_000;
  const start = performance.now();
  const measureFrom = start + warmupMs;
  const end = measureFrom + seconds * 1000;
  let scheduledCount = 0;
  let sent = 0;
  /** This process's CPU time when the recorded window began (the generator's own cost). */
  let cpuAtMeasure: NodeJS.CpuUsage | undefined;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      if (cpuAtMeasure === undefined && now >= measureFrom) cpuAtMeasure = process.cpuUsage();
      while (scheduledCount * intervalMs + start <= Math.min(now, end)) {
        const at = start + scheduledCount++ * intervalMs;
        const recorded = at >= measureFrom;
        if (recorded) {
          sent++;
          sendLags.push(now - at);
        }
        fire({ firedAt: now, recorded });
      }
      if (now >= end) return resolve();
      setTimeout(tick, 1);
    };
    tick();
  });
  running = false;
  const cpu = process.cpuUsage(cpuAtMeasure);
  const drainDeadline = performance.now() + 5_000;
  while (outstanding > 0 && performance.now() < drainDeadline)
    await new Promise((r) => setTimeout(r, 5));
  const percentile = (values: number[], q: number) => {
    if (values.length === 0) return NaN;
    values.sort((a, b) => a - b);
    return values[Math.min(values.length - 1, Math.floor(q * values.length))]!;
  };
  const windowStart = performance.timeOrigin + measureFrom;
  const windowEnd = performance.timeOrigin + end;
  const stalls = (await monitor.stop()).filter(([at]) => at >= windowStart && at <= windowEnd);
  process.stdout.write(
    `${JSON.stringify({
      rate,
      sent,
      completed,
      errors,
      dropped,
      unfinished: outstanding,
      achievedRps: completed / seconds,
      p50: percentile(latencies, 0.5),
      p90: percentile(latencies, 0.9),
      p99: percentile(latencies, 0.99),
      max: percentile(latencies, 1),
      sendLagP99: percentile(sendLags, 0.99),
      // CPU the generator itself used in the recorded window (user + system), in % of one core.
      generatorCpuPct: (cpu.user + cpu.system) / 1e4 / seconds,
      hostStalls: {
        count: stalls.length,
        maxMs: stalls.reduce((m, [, late]) => Math.max(m, late), 0),
        totalMs: stalls.reduce((t, [, late]) => t + late, 0),
      },
    })}\n`,
  );
}

/** Starts stall-monitor.ts and waits until it runs; `stop` returns the stalls it saw. */
async function startStallMonitor(): Promise<{ stop(): Promise<[number, number][]> }> {
  const child = spawn(
    process.execPath,
    ['-r', '@swc-node/register', join(__dirname, 'stall-monitor.ts')],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => reject(new Error('stall monitor exited before it was ready')));
    child.stdout.on('data', () => {
      if (out.startsWith('ready\n')) resolve();
    });
  });
  return {
    stop: () =>
      new Promise((resolve) => {
        child.once('close', () =>
          resolve(JSON.parse(out.slice('ready\n'.length)) as [number, number][]),
        );
        child.kill('SIGTERM');
      }),
  };
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
