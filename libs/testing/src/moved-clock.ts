import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The moved clock of ADR 0505 as a test drives it: the offset file of CLOCK_OFFSET_FILE, which a
 * process started with `env` adds to its system clock (`processClock` of
 * @meridian/platform-config reads it every 50 ms). Forward only, as the ADR moves it.
 */
export interface MovedClock {
  /** For the processes whose clock moves with this one (webhook-matcher, delivery-worker). */
  readonly env: { CLOCK_OFFSET_FILE: string };
  /** How far it has moved, in milliseconds. */
  readonly offsetMs: number;
  /** What a process reading the file takes for now: the system clock plus the offset. */
  now(): Date;
  /**
   * Moves it forward by `ms` (a whole number, 0 or more: the reader ignores any other). The
   * file is replaced by rename, so no reader sees half a number.
   */
  advance(ms: number): void;
  /** Removes the file and its directory. */
  dispose(): void;
}

/** A moved clock at offset 0, its file in a fresh temporary directory named after `name`. */
export function movedClock(name = 'moved-clock'): MovedClock {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  const file = join(dir, 'offset');
  let offsetMs = 0;
  const write = () => {
    writeFileSync(`${file}.next`, String(offsetMs));
    renameSync(`${file}.next`, file);
  };
  write();
  return {
    env: { CLOCK_OFFSET_FILE: file },
    get offsetMs() {
      return offsetMs;
    },
    now: () => new Date(Date.now() + offsetMs),
    advance(ms: number) {
      if (!Number.isSafeInteger(ms) || ms < 0)
        throw new RangeError(`a moved clock goes forward by whole milliseconds, not by ${ms}`);
      offsetMs += ms;
      write();
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
