import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildInfo, buildInfoOf } from './build-info';

describe('buildInfoOf', () => {
  it.each([
    [
      { MERIDIAN_COMMIT: 'a1b2c3d' },
      '{"version":"1.2.3"}',
      { version: '1.2.3', commit: 'a1b2c3d' },
    ],
    [
      { MERIDIAN_COMMIT: ' a1b2c3d\n' },
      '{"version":"1.2.3"}',
      { version: '1.2.3', commit: 'a1b2c3d' },
    ],
    // An image built without --build-arg MERIDIAN_COMMIT has it empty (the ARG's default).
    [{ MERIDIAN_COMMIT: '' }, '{"version":"1.2.3"}', { version: '1.2.3', commit: 'unknown' }],
    [{}, '{"version":"1.2.3"}', { version: '1.2.3', commit: 'unknown' }],
    [{}, '{"name":"x"}', { version: 'unknown', commit: 'unknown' }],
    // A package.json that cannot be read or parsed names no version; the app still starts.
    [{}, 'not json', { version: 'unknown', commit: 'unknown' }],
    [{}, 'null', { version: 'unknown', commit: 'unknown' }],
  ])('%j with %s is %j', (env, packageJson, expected) => {
    expect(buildInfoOf(env, packageJson)).toEqual(expected);
  });
});

describe('buildInfo', () => {
  it("names the root package.json's version", () => {
    const root = JSON.parse(
      readFileSync(join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8'),
    ) as { name: string; version: string };
    expect(root.name).toBe('meridian');
    expect(buildInfo().version).toBe(root.version);
  });
});
