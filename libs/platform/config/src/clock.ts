import { readFileSync } from 'node:fs';
import { systemClock, type Clock } from '@meridian/time';
import { z } from 'zod';

/**
 * The process clock's variables (ADR 0505). `CLOCK_OFFSET_FILE` names a file holding a number of
 * milliseconds added to the system clock, re-read when it changes: the fault suite moves the
 * delivery side (webhook-matcher, delivery-worker) through minutes of the delivery schedule in
 * seconds, as unit tests move a FakeClock. Test deployments only: refused with
 * NODE_ENV=production (the image sets it), see `refuseClockOffsetInProduction`.
 */
export const clockEnv = {
  CLOCK_OFFSET_FILE: z.string().min(1).optional(),
  NODE_ENV: z.string().optional(),
};

/** For an app schema's `superRefine`: a moved clock never reaches a production process. */
export function refuseClockOffsetInProduction(
  config: { CLOCK_OFFSET_FILE?: string | undefined; NODE_ENV?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  if (config.CLOCK_OFFSET_FILE !== undefined && config.NODE_ENV === 'production')
    ctx.addIssue({
      code: 'custom',
      path: ['CLOCK_OFFSET_FILE'],
      message: 'moves the clock for tests and is refused with NODE_ENV=production',
    });
}

/** How often the offset file is read (a plain read: no watcher race with the file's creation). */
const OFFSET_POLL_MS = 50;

export interface ProcessClock extends Clock {
  /** Stops watching the offset file (nothing to do for the system clock). */
  close(): void;
}

/** The system clock, or the system clock plus the offset in `CLOCK_OFFSET_FILE`. */
export function processClock(config: { CLOCK_OFFSET_FILE?: string | undefined }): ProcessClock {
  const path = config.CLOCK_OFFSET_FILE;
  if (path === undefined) return { now: systemClock.now, close: () => undefined };
  let offsetMs = readOffset(path, 0);
  const timer = setInterval(() => {
    offsetMs = readOffset(path, offsetMs);
  }, OFFSET_POLL_MS);
  timer.unref();
  return {
    now: () => new Date(Date.now() + offsetMs),
    close: () => clearInterval(timer),
  };
}

/**
 * The file's offset; `previous` while it is missing or half-written (a writer replaces it by
 * rename, but a reader must not turn a torn read into a jump back to zero).
 */
function readOffset(path: string, previous: number): number {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch {
    return previous;
  }
  const value = Number(text);
  return text !== '' && Number.isSafeInteger(value) ? value : previous;
}
