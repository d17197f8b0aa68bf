import fc, { type Parameters as FcParameters } from 'fast-check';

/**
 * Seeded and repeatable: every run prints its seed; `FUZZ_SEED=<seed>` replays it. `FUZZ_RUNS`
 * sets the cases per batch: small in CI (`npm test`), large in `npm run fuzz`.
 */
export interface FuzzConfig {
  seed: number;
  runs: number;
}

export function fuzzConfig(env: NodeJS.ProcessEnv = process.env): FuzzConfig {
  const seed = env['FUZZ_SEED'] ? Number(env['FUZZ_SEED']) : Math.floor(Math.random() * 2 ** 31);
  const runs = env['FUZZ_RUNS'] ? Number(env['FUZZ_RUNS']) : 60;
  if (!Number.isInteger(seed))
    throw new Error(`FUZZ_SEED must be an integer, got ${env['FUZZ_SEED']}`);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`FUZZ_RUNS must be a positive integer, got ${env['FUZZ_RUNS']}`);
  return { seed, runs };
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
  const details = await fc.check(property, batchParameters(config, batch));
  if (!details.failed) return;
  const error = details.errorInstance;
  const message = error instanceof Error ? error.message : String(error);
  throw new Error(
    `${batch}: failed after ${details.numRuns} case(s), seed ${config.seed} (batch seed ${details.seed}, path ${details.counterexamplePath})\n${message.slice(0, 4_000)}`,
  );
}
