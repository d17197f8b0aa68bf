import fc, { type Parameters as FcParameters } from 'fast-check';

/**
 * Seeded and repeatable: every run prints its seed; `FUZZ_SEED=<seed>` replays it. `FUZZ_RUNS`
 * sets the cases per batch: small in CI (`npm test`), large in `npm run fuzz`. The CI budget is
 * also a time: a batch stops after `FUZZ_BATCH_SECONDS` (20 by default), so a slow machine runs
 * fewer cases instead of a longer CI; a batch cut short passes with the cases it ran and says
 * how many. A run that names its case count (`FUZZ_RUNS`: `npm run fuzz`, a replay) has no time
 * limit unless it sets one too: a replay must reach the case that failed.
 */
export interface FuzzConfig {
  seed: number;
  runs: number;
  /** Per batch; undefined: no limit. */
  batchTimeLimitMs: number | undefined;
}

export const DEFAULT_BATCH_SECONDS = 20;

export function fuzzConfig(env: NodeJS.ProcessEnv = process.env): FuzzConfig {
  const seed = env['FUZZ_SEED'] ? Number(env['FUZZ_SEED']) : Math.floor(Math.random() * 2 ** 31);
  const runs = env['FUZZ_RUNS'] ? Number(env['FUZZ_RUNS']) : 60;
  const seconds = env['FUZZ_BATCH_SECONDS']
    ? Number(env['FUZZ_BATCH_SECONDS'])
    : env['FUZZ_RUNS']
      ? 0
      : DEFAULT_BATCH_SECONDS;
  if (!Number.isInteger(seed))
    throw new Error(`FUZZ_SEED must be an integer, got ${env['FUZZ_SEED']}`);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`FUZZ_RUNS must be a positive integer, got ${env['FUZZ_RUNS']}`);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new Error(
      `FUZZ_BATCH_SECONDS must be a number of seconds (0: no limit), got ${env['FUZZ_BATCH_SECONDS']}`,
    );
  return { seed, runs, batchTimeLimitMs: seconds === 0 ? undefined : seconds * 1000 };
}

/**
 * fast-check parameters of one batch. No shrinking: each case is a real request to real
 * processes, and the failing request is printed whole; replay with the seed to get it again.
 */
export function batchParameters(config: FuzzConfig, batch: string): FcParameters<unknown> {
  return {
    seed: config.seed ^ hash(batch),
    numRuns: config.runs,
    endOnFailure: true,
    verbose: 1,
    // Checked between cases; an interrupted batch is not a failure (markInterruptAsFailure).
    ...(config.batchTimeLimitMs === undefined
      ? {}
      : { interruptAfterTimeLimit: config.batchTimeLimitMs, markInterruptAsFailure: false }),
  };
}

function hash(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i += 1) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  return h;
}

/**
 * Runs one batch; on failure throws with the seed and the property's own message (which names
 * the request whole), not fast-check's dump of the generated values (megabytes for a big body).
 */
export async function runBatch<T>(
  property: fc.IAsyncProperty<T>,
  config: FuzzConfig,
  batch: string,
): Promise<void> {
  const started = Date.now();
  const details = await fc.check(property, batchParameters(config, batch));
  if (!details.failed) {
    const cut = details.interrupted ? ', stopped at the time limit' : '';
    process.stdout.write(
      `fuzz ${batch}: ${details.numRuns} case(s) in ${((Date.now() - started) / 1000).toFixed(1)} s${cut}\n`,
    );
    return;
  }
  const error = details.errorInstance;
  const message = error instanceof Error ? error.message : String(error);
  throw new Error(
    `${batch}: failed after ${details.numRuns} case(s), seed ${config.seed} (batch seed ${details.seed}, path ${details.counterexamplePath})\n${message.slice(0, 4_000)}`,
  );
}
