/**
 * Bench-only preload (`node --expose-gc -r …/gc-on-stdin.ts main.ts`, stdin a pipe): each line
 * on stdin runs two full garbage collections and prints `bench gc done`, so the bench reads the
 * matcher app's RSS with the index loaded and the load's garbage gone. Not a signal: Nest's
 * shutdown hooks take SIGUSR2 (and the others) as "stop". Nothing else of the app changes.
 */
process.stdin.setEncoding('utf8');
process.stdin.on('data', () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  process.stdout.write(`${JSON.stringify({ msg: 'bench gc done', gc: gc !== undefined })}\n`);
});
