import { runAppBenchmark } from '../app-benchmark';

/** Audit benchmark: lives in apps/audit-api/bench (it drives the app with the app's own harness). */
export const runBenchmark = (): Promise<string> =>
  runAppBenchmark('apps/audit-api/bench/audit.bench.ts');
