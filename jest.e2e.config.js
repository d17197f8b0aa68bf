// End-to-end: `npm start` as a user runs it (tools/stack/*.e2e-spec.ts). After the integration
// tests, because each file starts the whole stack (about 15 processes) on the machine: one file
// at a time alone; in `npm test` beside the faults suite (jest.stacks.config.js).
module.exports = {
  ...require('./jest.preset'),
  displayName: 'e2e',
  testMatch: ['<rootDir>/tools/**/*.e2e-spec.ts', '<rootDir>/apps/dashboard/test/**/*.e2e-spec.ts'],
  // The fault suite is a project of its own (jest.faults.config.js, `npm run test:faults`).
  testPathIgnorePatterns: [
    ...require('./jest.preset').testPathIgnorePatterns,
    '<rootDir>/tools/stack/faults.e2e-spec.ts',
  ],
  testTimeout: 330_000,
  maxWorkers: 1,
};
