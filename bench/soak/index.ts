import { cpus, loadavg } from 'node:os';
import { soakDelivery } from './delivery';
import { soakGateway } from './gateway';
import { soakMatcher } from './matcher';

/**
 * `npm run bench soak` (issue 18, item 2): three soaks one after another, each SOAK_MINUTES
 * long (default: 25 for the gateway, whose heap swings for about 10 minutes before a full
 * collection at these rates (ADR 0206), so a soak covers a whole swing and the next; 10 for the
 * others), RSS and open fds of the app's process tree sampled every 10 s:
 * - gateway at 70 % of its single-call maximum (gateway.ts);
 * - webhook-matcher holding 1,000,000 watched addresses under a steady block stream (matcher.ts);
 * - delivery-worker against a receiver failing every second request (delivery.ts).
 * `SOAK_ONLY=gateway|matcher|delivery` runs one.
 */
const SOAKS = {
  gateway: soakGateway,
  matcher: soakMatcher,
  delivery: soakDelivery,
} as const;
const DEFAULT_MINUTES: Record<keyof typeof SOAKS, number> = {
  gateway: 25,
  matcher: 10,
  delivery: 10,
};

export async function runBenchmark(): Promise<string> {
  const set = process.env['SOAK_MINUTES'];
  const minutes = set === undefined ? undefined : Number(set);
  if (minutes !== undefined && (!(minutes >= 1) || !Number.isInteger(minutes)))
    throw new Error('SOAK_MINUTES must be a whole number ≥ 1');
  const only = process.env['SOAK_ONLY'];
  if (only !== undefined && !(only in SOAKS))
    throw new Error(`SOAK_ONLY must be one of ${Object.keys(SOAKS).join(', ')}`);
  const names = (Object.keys(SOAKS) as (keyof typeof SOAKS)[]).filter(
    (n) => only === undefined || n === only,
  );
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const la = () =>
    loadavg()
      .map((x) => x.toFixed(1))
      .join(' / ');
  const parts: string[] = [];
  for (const name of names) {
    const started = new Date();
    const loadBefore = la();
    const report = await SOAKS[name](minutes ?? DEFAULT_MINUTES[name], log);
    parts.push(
      `${report}\n\n(${name}: started ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC; load average 1/5/15 min ${loadBefore} before, ${la()} after, ${cpus().length} cores.)`,
    );
  }
  return parts.join('\n\n');
}
