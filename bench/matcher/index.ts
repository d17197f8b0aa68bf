import { runAppBenchmark } from '../app-benchmark';

/** Matcher benchmark: lives in apps/webhook-matcher/bench (it uses the app's test harness). */
export const runBenchmark = (): Promise<string> =>
  runAppBenchmark('apps/webhook-matcher/bench/matcher.bench.ts');
