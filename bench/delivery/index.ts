import { cpus, loadavg } from 'node:os';
import { measureLatency, type Quantiles } from './latency';
import {
  CONCURRENCY,
  HOSTS,
  measureThroughput,
  type Rate,
  type ThroughputResult,
} from './throughput';

/**
 * `npm run bench delivery` (issue 15), in one run:
 * - attempts/s of the real delivery-worker process (signing, SSRF check, breaker, endpoint
 *   limits, attempt log, health events and billing all on) to a local receiver, beside a bare
 *   undici POST loop to the same receiver with the same concurrency (goal ≥ 0.5×): rounds of
 *   the two interleaved, the worker warm and draining a queue; its cold start (first jobs,
 *   published while it delivers them) reported beside;
 * - block on the devnet → first delivery received, p50/p99 (goal p99 < 250 ms), through the
 *   real chain-indexer, webhook-matcher and delivery-worker processes of the local stack.
 * DELIVERY_BENCH_JOBS (default 4000), DELIVERY_BENCH_ROUNDS (3) and DELIVERY_BENCH_SAMPLES
 * (default 220) size the run; DELIVERY_BENCH_WORKERS (default 1) runs that many worker processes,
 * each reading its own routes (ADR 0432), as the deployment's StatefulSet does with 2.
 */
export async function runBenchmark(): Promise<string> {
  const jobs = Number(process.env['DELIVERY_BENCH_JOBS'] ?? 4_000);
  const rounds = Number(process.env['DELIVERY_BENCH_ROUNDS'] ?? 3);
  const samples = Number(process.env['DELIVERY_BENCH_SAMPLES'] ?? 220);
  // Worker processes, each the partition of its routes (ADR 0432); the deployment runs 2.
  const workers = Number(process.env['DELIVERY_BENCH_WORKERS'] ?? 1);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const loadBefore = loadavg()[0]!;
  const t = await measureThroughput(jobs, rounds, workers);
  const loadAfterThroughput = loadavg()[0]!;
  const lat = await measureLatency(samples, log);
  const ratio = t.worker.perSecond / t.bare.perSecond;
  const coldRatio = t.cold.perSecond / t.bare.perSecond;
  const perS = (r: number) => `${Math.round(r).toLocaleString('en')}/s`;
  const cpu = (r: Rate) => `${r.cpuMsPerRequest.toFixed(3)} ms`;
  const each = (pick: (r: ThroughputResult['rounds'][number]) => Rate) =>
    t.rounds.map((r) => perS(pick(r).perSecond)).join(', ');
  const ms = (q: Quantiles) =>
    `p50 ${q.p50.toFixed(1)} ms, p99 ${q.p99.toFixed(1)} ms (max ${q.max.toFixed(1)})`;
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  return [
    `| measure | value | goal |`,
    `| --- | --- | --- |`,
    `| bare undici POST loop (${CONCURRENCY} concurrent, ${HOSTS} loopback hosts, ${jobs} requests), median of ${rounds} rounds | ${perS(t.bare.perSecond)} (${each((r) => r.bare)}) | |`,
    `| delivery-worker (${workers} process${workers > 1 ? 'es, one per route' : ''}), warm, draining a queue of ${jobs} jobs (each delivered once: ${t.worker.distinctIds} distinct webhook-id, ${t.worker.unsigned} unsigned), median of ${rounds} rounds interleaved with the bare loop's | ${perS(t.worker.perSecond)} (${ratio.toFixed(2)}× bare; ${each((r) => r.worker)}) | ≥ 0.5× |`,
    `| delivery-worker (${workers} process${workers > 1 ? 'es' : ''}), cold: its first ${jobs} jobs after start, published while it delivers them | ${perS(t.cold.perSecond)} (${coldRatio.toFixed(2)}× bare) | |`,
    `| CPU per request of the sending process(es) (user + system): bare loop / worker warm / worker cold | ${cpu(t.bare)} / ${cpu(t.worker)} / ${cpu(t.cold)} | |`,
    ...(t.worker.during
      ? [
          `| warm worker rounds (medians): its event-loop utilisation (1 = its thread is the bound); CPU per attempt of Postgres / NATS / the receiver (every \`postgres\` and \`nats-server\` process) | ${t.worker.during.eventLoopUtilization.toFixed(2)}; ${t.worker.during.postgresMs.toFixed(3)} / ${t.worker.during.natsMs.toFixed(3)} / ${t.worker.during.receiverMs.toFixed(3)} ms | |`,
        ]
      : []),
    `| devnet block → first delivery received (indexer → matcher → worker processes), n=${lat.n}, missed ${lat.missed} | ${ms(lat)} | p99 < 250 ms |`,
    `| … of which block → job on WEBHOOK (indexer + matcher) | ${ms(lat.toJob)} | |`,
    `| … of which job → delivery received (worker) | ${ms(lat.jobToReceived)} | |`,
    ``,
    `delivery: worker (${workers}) ${perS(t.worker.perSecond)} = ${ratio.toFixed(2)}× bare ${perS(t.bare.perSecond)} (goal ≥ 0.5×: ${verdict(ratio >= 0.5)}; cold ${coldRatio.toFixed(2)}×); block → delivery p50 ${lat.p50.toFixed(0)} ms, p99 ${lat.p99.toFixed(0)} ms (goal < 250 ms: ${verdict(lat.p99 < 250)}); load average ${loadBefore.toFixed(1)} → ${loadAfterThroughput.toFixed(1)} (attempts) → ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`,
  ].join('\n');
}

if (require.main === module) {
  runBenchmark().then(
    (report) => {
      process.stdout.write(`${report}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`delivery bench failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
}
