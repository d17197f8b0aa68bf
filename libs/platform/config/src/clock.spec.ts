import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { clockEnv, processClock, refuseClockOffsetInProduction, type ProcessClock } from './clock';
import { ConfigError, parseConfig } from './load-config';

const schema = z.object({ ...clockEnv }).superRefine(refuseClockOffsetInProduction);

/** Waits (I/O, not a time rule) until the watcher has seen the file's new content. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('processClock (CLOCK_OFFSET_FILE)', () => {
  let dir: string;
  let clock: ProcessClock | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'clock-'));
  });
  afterEach(() => {
    clock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const skew = () => clock!.now().getTime() - Date.now();
  const write = (file: string, text: string) => {
    writeFileSync(`${file}.tmp`, text);
    renameSync(`${file}.tmp`, file);
  };

  it('is the system clock without a file', () => {
    clock = processClock({});
    expect(Math.abs(skew())).toBeLessThan(50);
  });

  it('adds the offset the file holds, and follows the file when it changes', async () => {
    const file = join(dir, 'offset');
    write(file, '600000');
    clock = processClock({ CLOCK_OFFSET_FILE: file });
    expect(Math.abs(skew() - 600_000)).toBeLessThan(50);
    write(file, '1200000\n');
    await until(() => Math.abs(skew() - 1_200_000) < 50);
  });

  it('keeps the last offset while the file is missing or unreadable as a number', async () => {
    const file = join(dir, 'offset');
    clock = processClock({ CLOCK_OFFSET_FILE: file });
    expect(Math.abs(skew())).toBeLessThan(50);
    write(file, '300000');
    await until(() => Math.abs(skew() - 300_000) < 50);
    // Each bad state stands for a few reads of the file; none moves the clock back to zero.
    for (const bad of ['not a number', '', undefined, '12.5', 'garbage']) {
      if (bad === undefined) rmSync(file);
      else write(file, bad);
      await new Promise((r) => setTimeout(r, 150));
      expect(Math.abs(skew() - 300_000)).toBeLessThan(50);
    }
    write(file, '900000');
    await until(() => Math.abs(skew() - 900_000) < 50);
  });

  it('is refused with NODE_ENV=production, naming the variable', () => {
    expect(() =>
      parseConfig(schema, { CLOCK_OFFSET_FILE: '/x/offset', NODE_ENV: 'production' }),
    ).toThrow(
      new ConfigError(
        'CLOCK_OFFSET_FILE',
        'is invalid: moves the clock for tests and is refused with NODE_ENV=production',
      ),
    );
    expect(parseConfig(schema, { CLOCK_OFFSET_FILE: '/x/offset' }).CLOCK_OFFSET_FILE).toBe(
      '/x/offset',
    );
    expect(parseConfig(schema, { NODE_ENV: 'production' }).CLOCK_OFFSET_FILE).toBeUndefined();
  });
});
