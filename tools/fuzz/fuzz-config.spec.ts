import fc from 'fast-check';
import { batchParameters, DEFAULT_BATCH_SECONDS, fuzzConfig, runBatch } from './fuzz-config';

describe('fuzz budget', () => {
  it('limits each batch in time by default (CI), not when the run names its case count (npm run fuzz, a replay)', () => {
    expect(fuzzConfig({ FUZZ_SEED: '7' })).toEqual({
      seed: 7,
      runs: 60,
      batchTimeLimitMs: DEFAULT_BATCH_SECONDS * 1000,
    });
    expect(fuzzConfig({ FUZZ_SEED: '7', FUZZ_RUNS: '1000' }).batchTimeLimitMs).toBeUndefined();
    expect(fuzzConfig({ FUZZ_RUNS: '1000', FUZZ_BATCH_SECONDS: '60' }).batchTimeLimitMs).toBe(
      60_000,
    );
    expect(
      fuzzConfig({ FUZZ_SEED: '7', FUZZ_BATCH_SECONDS: '0' }).batchTimeLimitMs,
    ).toBeUndefined();
    expect(fuzzConfig({ FUZZ_SEED: '7', FUZZ_BATCH_SECONDS: '2.5' }).batchTimeLimitMs).toBe(2_500);
    expect(() => fuzzConfig({ FUZZ_BATCH_SECONDS: '-1' })).toThrow('FUZZ_BATCH_SECONDS');
    expect(batchParameters(fuzzConfig({ FUZZ_SEED: '7' }), 'b')).toMatchObject({
      interruptAfterTimeLimit: DEFAULT_BATCH_SECONDS * 1000,
      markInterruptAsFailure: false,
    });
  });

  it('stops a slow batch at its time limit and passes with the cases it ran', async () => {
    let cases = 0;
    const started = Date.now();
    await runBatch(
      fc.asyncProperty(fc.integer(), async () => {
        cases += 1;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }),
      { seed: 1, runs: 1_000, batchTimeLimitMs: 300 },
      'slow',
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(cases).toBeGreaterThan(0);
    expect(cases).toBeLessThan(1_000);
  });

  it('still fails a batch that finds a problem before the limit', async () => {
    await expect(
      runBatch(
        fc.asyncProperty(fc.integer(), async () => {
          throw new Error('a 5xx');
        }),
        { seed: 1, runs: 10, batchTimeLimitMs: 10_000 },
        'failing',
      ),
    ).rejects.toThrow('failing: failed after 1 case(s), seed 1');
  });
});
