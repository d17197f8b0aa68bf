import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

/** The architecture rules are enforced by lint, not by convention: these imports must fail. */
describe('module boundaries (lint)', () => {
  const root = resolve(__dirname, '../..');
  const eslintBin = join(root, 'node_modules/eslint/bin/eslint.js');

  // The Nx rule reads the cached project graph and silently skips without one: compute it first.
  beforeAll(() => {
    const graph = spawnSync(
      process.execPath,
      [join(root, 'node_modules/nx/dist/bin/nx.js'), 'show', 'projects'],
      {
        cwd: root,
        env: { ...process.env, NX_DAEMON: 'false' },
        encoding: 'utf8',
      },
    );
    expect(graph.status).toBe(0);
  });

  const ruleIdsOf = (filePath: string, code: string): string[] => {
    const run = spawnSync(
      process.execPath,
      [eslintBin, '--stdin', '--stdin-filename', filePath, '--format', 'json'],
      {
        cwd: root,
        input: code,
        encoding: 'utf8',
      },
    );
    const [result] = JSON.parse(run.stdout) as Array<{
      messages: Array<{ ruleId: string | null }>;
    }>;
    return result!.messages.map((message) => String(message.ruleId));
  };

  it('refuses an app importing another app', () => {
    const rules = ruleIdsOf(
      'apps/audit-api/src/bad-import.ts',
      "import { SERVICE } from '../../rpc-gateway/src/app.module';\nexport const x = SERVICE;\n",
    );
    expect(rules).toContain('@nx/enforce-module-boundaries');
  });

  it.each(['@nestjs/common', 'typeorm', '@nats-io/jetstream'])(
    'refuses a domain lib importing %s',
    (module) => {
      const rules = ruleIdsOf(
        'libs/domain/time/src/bad-import.ts',
        `import * as m from '${module}';\nexport const x = m;\n`,
      );
      expect(rules).toContain('no-restricted-imports');
    },
  );

  it('refuses a domain lib importing a platform lib', () => {
    const rules = ruleIdsOf(
      'libs/domain/time/src/bad-import.ts',
      "import { parseConfig } from '@meridian/platform-config';\nexport const x = parseConfig;\n",
    );
    expect(rules).toContain('@nx/enforce-module-boundaries');
  });

  it('accepts an app importing a platform lib', () => {
    const rules = ruleIdsOf(
      'apps/audit-api/src/good-import.ts',
      "import { parseConfig } from '@meridian/platform-config';\nexport const x = parseConfig;\n",
    );
    expect(rules).toEqual([]);
  });
});
