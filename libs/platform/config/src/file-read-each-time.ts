import { readFileSync } from 'node:fs';

/**
 * A file's bytes, read now (so a missing file fails at start) and again at each call, the last
 * read kept when a later one fails (a file mid-swap; a mounted Secret's files are swapped at once,
 * so this is rare). For clients that ask at each connection: nats.js authenticators, ioredis's
 * `tls` option (ADR 0506, "renewal without a restart").
 */
export function fileReadEachTime(file: string): () => Buffer {
  let last = readFileSync(file);
  return () => {
    try {
      last = readFileSync(file);
    } catch {
      // Keep the last one read.
    }
    return last;
  };
}
