// Lint: typescript-eslint for code quality, Nx module boundaries for architecture.
// Tags (project.json): type:app | type:contracts | type:domain | type:platform | type:testing | type:tool.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import nx from '@nx/eslint-plugin';
import globals from 'globals';

/** Who may import whom, by Nx tag. Test code of an app may also use the testing harness. */
function boundaries({ appsMayUseTesting }) {
  const shared = ['type:contracts', 'type:domain', 'type:platform'];
  return [
    'error',
    {
      enforceBuildableLibDependency: false,
      allow: [],
      depConstraints: [
        {
          sourceTag: 'type:app',
          onlyDependOnLibsWithTags: appsMayUseTesting ? [...shared, 'type:testing'] : shared,
        },
        { sourceTag: 'type:platform', onlyDependOnLibsWithTags: shared },
        {
          sourceTag: 'type:contracts',
          onlyDependOnLibsWithTags: ['type:contracts', 'type:domain'],
        },
        { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain'] },
        { sourceTag: 'type:testing', onlyDependOnLibsWithTags: [...shared, 'type:testing'] },
        { sourceTag: 'type:tool', onlyDependOnLibsWithTags: [...shared, 'type:testing'] },
      ],
    },
  ];
}

const testCode = [
  '**/*.spec.ts',
  '**/*.int-spec.ts',
  '**/*.e2e-spec.ts',
  'apps/*/test/**/*.ts',
  'apps/*/bench/**/*.ts',
  'apps/*/src/testing/**/*.ts',
];

const infrastructure = [
  '@nestjs/*',
  'typeorm',
  'pg',
  '@nats-io/*',
  'nats',
  '@grpc/*',
  'fastify',
  'undici',
  'ws',
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      '.stack/**',
      '.nx/**',
      'libs/contracts/src/gen/**',
      'coverage/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': boundaries({ appsMayUseTesting: false }),
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'off',
    },
  },
  {
    // Domain libraries are pure: no framework, database, broker or network client.
    files: ['libs/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: infrastructure.map((group) => ({
            group: [group],
            message: 'domain libs stay pure (no I/O frameworks)',
          })),
        },
      ],
    },
  },
  {
    // The gateway's code, which runs per call, message or subscription (ADR 0207): an object
    // spread in the relay made V8 promote every request's answer to the old generation, doubling
    // each scavenge's pause. Its config is read once at start-up and may spread.
    files: ['apps/rpc-gateway/src/**/*.ts', 'libs/domain/jsonrpc/src/**/*.ts'],
    ignores: [...testCode, 'apps/rpc-gateway/src/config/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ObjectExpression > SpreadElement',
          message:
            'no object spread on the relay path: write the object literal out (docs/adr/0207-no-object-spread-on-the-relay-path.md)',
        },
      ],
    },
  },
  {
    // Plain CommonJS config and bootstrap scripts (run before any TypeScript tooling).
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    files: testCode,
    rules: { '@nx/enforce-module-boundaries': boundaries({ appsMayUseTesting: true }) },
  },
  {
    files: [...testCode, 'libs/testing/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
