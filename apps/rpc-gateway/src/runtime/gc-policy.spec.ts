import { spawnSync } from 'node:child_process';
import { configSchema } from '../config/config';
import { applyGcPolicy } from './gc-policy';

describe('applyGcPolicy', () => {
  it('sets V8 heap growing to the configured percent', () => {
    const flags: string[] = [];
    applyGcPolicy(300, (f) => flags.push(f));
    expect(flags).toEqual(['--heap-growing-percent=300']);
  });

  it('leaves V8 its own heuristics at 0', () => {
    const flags: string[] = [];
    applyGcPolicy(0, (f) => flags.push(f));
    expect(flags).toEqual([]);
  });

  it('is a flag this V8 knows (V8 does not throw on an unknown one, it prints an error)', () => {
    const run = (flag: string) =>
      spawnSync(process.execPath, ['-e', `require('node:v8').setFlagsFromString('${flag}')`], {
        encoding: 'utf8',
      }).stderr;
    expect(run('--no-such-flag-for-this-test')).toMatch(/unrecognized flag/);
    const flags: string[] = [];
    applyGcPolicy(300, (f) => flags.push(f));
    expect(run(flags[0]!)).toBe('');
  });
});

describe('HEAP_GROWING_PERCENT', () => {
  const parse = (env: Record<string, string>) =>
    configSchema.safeParse({ REGION: 'eu', HTTP_PORT: '8080', ...env });

  it('defaults to 300 and accepts 0', () => {
    expect(parse({}).data?.HEAP_GROWING_PERCENT).toBe(300);
    expect(parse({ HEAP_GROWING_PERCENT: '0' }).data?.HEAP_GROWING_PERCENT).toBe(0);
  });

  it('refuses negative or absurd values', () => {
    expect(parse({ HEAP_GROWING_PERCENT: '-1' }).success).toBe(false);
    expect(parse({ HEAP_GROWING_PERCENT: '5000' }).success).toBe(false);
  });
});
