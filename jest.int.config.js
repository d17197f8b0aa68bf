// Integration tests: real Postgres, NATS JetStream and anvil devnets. Each test file isolates
// itself by unique names (database, stream prefix), so files may run in parallel.
module.exports = {
  ...require('./jest.preset'),
  displayName: 'int',
  testMatch: ['<rootDir>/{apps,libs,tools,bench,deploy}/**/*.int-spec.ts'],
  testTimeout: 60_000,
  maxWorkers: 2,
};
