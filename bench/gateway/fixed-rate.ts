import { Pool } from 'undici';

/**
 * A small open-loop load generator (wrk2 is not in Debian): sends POSTs at a fixed rate for a
 * fixed time over a bounded pool of keep-alive connections and prints one JSON line with the
 * achieved rate and latency percentiles. Latency is measured from each request's *scheduled*
 * send time, so a stalled server is charged for the requests it delays (no coordinated
 * omission). The first second runs at the same rate unrecorded (JIT, connection set-up). Bounded: at most `maxOutstanding` requests wait; beyond that they are counted as
 * dropped (the target cannot keep up with the rate). Run as its own process:
 * `node -r @swc-node/register fixed-rate.ts <url> <rate/s> <seconds> <connections> <body>`.
 */
async function main(): Promise<void> {
  const [url, rateText, secondsText, connectionsText, body] = process.argv.slice(2);
  const rate = Number(rateText);
  const seconds = Number(secondsText);
  const connections = Number(connectionsText);
  if (!url || !(rate > 0) || !(seconds > 0) || !(connections > 0) || body === undefined)
    throw new Error('usage: fixed-rate.ts <url> <rate> <seconds> <connections> <body>');
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections, pipelining: 1 });
  const path = `${target.pathname}${target.search}`;
  const headers = { 'content-type': 'application/json' };
  const maxOutstanding = connections * 8;
  const latencies: number[] = [];
  let outstanding = 0;
  let errors = 0;
  let dropped = 0;
  let completed = 0;

  const fire = (scheduled: number, recorded: boolean) => {
    if (outstanding >= maxOutstanding) {
      if (recorded) dropped++;
      return;
    }
    outstanding++;
    let status = 0;
    pool.dispatch(
      { path, method: 'POST', headers, body },
      {
        onRequestStart: () => undefined,
        onResponseStart: (_c, code) => {
          status = code;
        },
        onResponseData: () => undefined,
        onResponseEnd: () => {
          outstanding--;
          if (!recorded) return;
          completed++;
          if (status === 200) latencies.push(performance.now() - scheduled);
          else errors++;
        },
        onResponseError: () => {
          outstanding--;
          if (recorded) errors++;
        },
      },
    );
  };

  const intervalMs = 1000 / rate;
  const warmupMs = 1_000;
  const start = performance.now();
  const measureFrom = start + warmupMs;
  const end = measureFrom + seconds * 1000;
  let scheduledCount = 0;
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (scheduledCount * intervalMs + start <= Math.min(now, end)) {
        const at = start + scheduledCount++ * intervalMs;
        const recorded = at >= measureFrom;
        if (recorded) sent++;
        fire(at, recorded);
      }
      if (now >= end) return resolve();
      setTimeout(tick, 1);
    };
    tick();
  });
  const drainDeadline = performance.now() + 5_000;
  while (outstanding > 0 && performance.now() < drainDeadline)
    await new Promise((r) => setTimeout(r, 5));
  const elapsed = seconds;
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies.length === 0
      ? NaN
      : latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  process.stdout.write(
    `${JSON.stringify({
      rate,
      sent,
      completed,
      errors,
      dropped,
      unfinished: outstanding,
      achievedRps: completed / elapsed,
      p50: at(0.5),
      p90: at(0.9),
      p99: at(0.99),
      max: at(1),
    })}\n`,
  );
  await pool.destroy();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
