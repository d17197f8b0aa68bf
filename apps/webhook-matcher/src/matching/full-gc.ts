import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * One full garbage collection, now. Only the matcher's index load calls it (every 100,000 list
 * members and at the end): a million list members arrive as a million rows and strings that are
 * garbage a moment later, which V8 otherwise kept (about 140 MiB at the end of the load,
 * bench/README.md "## matcher") until a full collection an idle matcher may not reach for long.
 * `gc` is V8's own, exposed on demand when node runs without `--expose-gc`.
 */
export function collectGarbage(): void {
  let gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}
