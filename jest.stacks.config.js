// The two suites that start whole stacks (`npm start` as a user runs it): the e2e tests and the
// faults suite, side by side in one run, two files at a time. Each keeps its own settings
// (jest.e2e.config.js, jest.faults.config.js); run alone, each takes one file at a time. In
// `npm test` together: 563 s against 714 s one after the other (2026-12-03, CI's machine), the
// dashboard's browser file and the faults suite first (jest starts the largest files first).
// A project's own `maxWorkers` is its run-alone setting: jest takes it from the root only.
const asProject = (config) =>
  Object.fromEntries(Object.entries(config).filter(([key]) => key !== 'maxWorkers'));

module.exports = {
  projects: [require('./jest.e2e.config'), require('./jest.faults.config')].map(asProject),
  maxWorkers: 2,
};
