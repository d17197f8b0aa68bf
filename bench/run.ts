import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `npm run bench [name…]`: runs every benchmark under bench/<name>/index.ts (or the named ones).
 * Each exports `runBenchmark(): Promise<string>` returning its report as Markdown; figures are
 * ratios measured in the same run, so they compare on any machine.
 */
interface BenchmarkModule {
  runBenchmark(): Promise<string>;
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const names = readdirSync(__dirname, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(__dirname, entry.name, 'index.ts')))
    .map((entry) => entry.name)
    .filter((name) => wanted.length === 0 || wanted.includes(name))
    .sort();
  if (names.length === 0) throw new Error(`no benchmark matches ${wanted.join(', ') || '(any)'}`);
  for (const name of names) {
    process.stdout.write(`\n## ${name}\n\n`);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const benchmark = require(join(__dirname, name, 'index.ts')) as BenchmarkModule;
    process.stdout.write(`${await benchmark.runBenchmark()}\n`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
