// Unit tests: pure, fast, no I/O beyond the process.
module.exports = {
  ...require('./jest.preset'),
  displayName: 'unit',
  testMatch: ['<rootDir>/{apps,libs,tools,bench}/**/*.spec.ts'],
  // One file per core, not jest's default of one core fewer: the main process only hands out
  // files and collects results. On CI's two cores that is two workers, not one (66 s against
  // about 200 s for the suite, 2026-12-02).
  maxWorkers: '100%',
};
