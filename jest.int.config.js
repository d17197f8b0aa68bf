// Integration tests: real Postgres, NATS JetStream and anvil devnets. Each test file isolates
// itself by unique names (database, stream prefix), so files may run in parallel.
module.exports = {
  ...require('./jest.preset'),
  displayName: 'int',
  testMatch: ['<rootDir>/{apps,libs,tools,bench,deploy}/**/*.int-spec.ts'],
  testTimeout: 60_000,
  // Three files at a time on two cores: much of an integration test is waiting on child processes,
  // Postgres and NATS. Measured on a clean clone: 426 s against 573 s with two (2026-11-30).
  maxWorkers: 3,
};
