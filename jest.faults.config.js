// Faults survived (issue 18, docs/adr/0504): the whole local stack under kill -9 of each app,
// NATS and Postgres restarts and a frozen billing-ledger, with steady load. Its own project
// because it takes minutes; `npm test` runs it beside the e2e tests (jest.stacks.config.js).
const preset = require('./jest.preset');

module.exports = {
  ...preset,
  displayName: 'faults',
  testMatch: ['<rootDir>/tools/stack/faults.e2e-spec.ts'],
  testTimeout: 900_000,
  maxWorkers: 1,
};
