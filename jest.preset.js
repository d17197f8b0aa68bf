// Shared jest settings: TypeScript through swc (decorator metadata for Nest/TypeORM) and the
// workspace path aliases read from tsconfig.base.json, so there is one list of aliases.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const swcrc = JSON.parse(readFileSync(join(__dirname, '.swcrc'), 'utf8'));
delete swcrc.$schema;
const { paths } = JSON.parse(
  readFileSync(join(__dirname, 'tsconfig.base.json'), 'utf8'),
).compilerOptions;

const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(paths)) {
  moduleNameMapper[`^${alias.replace(/[/.]/g, '\\$&')}$`] = `<rootDir>/${target}`;
}

module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)s$': ['@swc/jest', { ...swcrc, swcrc: false }] },
  moduleNameMapper,
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.stack/'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/dist/', '<rootDir>/.stack/'],
};
