// Unit tests: pure, fast, no I/O beyond the process.
module.exports = {
  ...require('./jest.preset'),
  displayName: 'unit',
  testMatch: ['<rootDir>/{apps,libs,tools,bench}/**/*.spec.ts'],
};
