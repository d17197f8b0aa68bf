/**
 * A host-stall canary for the fixed-rate rows (started by fixed-rate.ts for each window): an
 * otherwise idle process that wakes every millisecond and notes every wake-up that came at least
 * STALL_MS late. An idle process is woken ahead of busy ones, so a late wake-up means the whole
 * machine stopped (this host, a VM, does: the event loops of generator, upstream and gateway
 * stalled at the same millisecond, bench/README "gateway"), not that the path under test was
 * busy. On SIGTERM it prints one JSON line: the stalls as [epoch ms, ms late] pairs.
 * Run as its own process: `node -r @swc-node/register stall-monitor.ts`.
 */
const STALL_MS = 5;
const stalls: [number, number][] = [];
let last = performance.now();
const timer = setInterval(() => {
  const now = performance.now();
  const late = now - last - 1;
  if (late >= STALL_MS) stalls.push([performance.timeOrigin + last, late]);
  last = now;
}, 1);

process.on('SIGTERM', () => {
  clearInterval(timer);
  process.stdout.write(`${JSON.stringify(stalls)}\n`, () => process.exit(0));
});
process.stdout.write('ready\n');
