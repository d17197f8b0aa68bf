// Integration tests: real Postgres, NATS JetStream and anvil devnets. Each test file isolates
// itself by unique names (database, stream prefix), so files may run in parallel.
module.exports = {
  ...require('./jest.preset'),
  displayName: 'int',
  testMatch: ['<rootDir>/{apps,libs,tools,bench,deploy}/**/*.int-spec.ts'],
  testTimeout: 60_000,
  // Two files at a time, one per core. Three measured faster on a clean clone (426 s against
  // 573 s, 2026-11-30), but the CPU is then saturated and tests that wait for a child process
  // within a bound missed it in two of five full runs: not until those waits are made robust.
  maxWorkers: 2,
  // A worker past 1 GB after a file is replaced before the next: a worker that had run a hundred
  // files held ~2 GB, and the collector's work in a heap that size slowed a later file's
  // in-process app past its own deadlines (CI 2026-12-03: account-write-flood).
  workerIdleMemoryLimit: '1GB',
};
