import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import {
  REPOSITORY_ROOT,
  runAppScript,
  START_ATTEMPTS,
  startAppProcess,
  type AppProcess,
  type StartAppProcessOptions,
} from './app-process';
import { freePort } from './free-port';

const FIXTURE = 'libs/testing/src/fixtures/fixture-app.ts';

describe('startAppProcess / runAppScript (real child processes)', () => {
  const started: AppProcess[] = [];
  afterAll(async () => {
    await Promise.all(started.map((app) => app.stop(0)));
  });

  const start = async (mode: string, env: Record<string, string> = {}, startTimeoutMs = 30_000) => {
    const port = await freePort();
    const app = await startAppProcess({
      main: FIXTURE,
      args: [mode],
      env: { FIXTURE_PORT: String(port), ...env },
      healthUrl: `http://127.0.0.1:${port}/healthz`,
      startTimeoutMs,
      stopGraceMs: 1_000,
    });
    started.push(app);
    return { app, port };
  };

  it('finds the repository root from its own location', () => {
    expect(existsSync(join(REPOSITORY_ROOT, 'nx.json'))).toBe(true);
    expect(existsSync(join(REPOSITORY_ROOT, FIXTURE))).toBe(true);
  });

  it('answers once the app is healthy; stop() sends SIGTERM, resolves on exit, and is idempotent', async () => {
    const { app, port } = await start('healthy', { FIXTURE_DELAY_MS: '1000' });
    expect(app.pid).toBe(app.child.pid);
    expect(app.running()).toBe(true);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect(app.log()).toContain('fixture: listening');
    const first = app.stop();
    const second = app.stop();
    expect(await first).toEqual({ code: 0, signal: null });
    expect(await second).toEqual({ code: 0, signal: null });
    expect(app.running()).toBe(false);
    expect(await app.stop()).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('rejects with the log when the child exits before it is up, well before the deadline', async () => {
    const begun = Date.now();
    await expect(start('crash', {}, 120_000)).rejects.toThrow(
      /fixture-app\.ts exited 3 before it was up:\nfixture: cannot start \(on purpose\)/,
    );
    expect(Date.now() - begun).toBeLessThan(60_000);
  }, 60_000);

  it('rejects after the deadline when the app never answers, and kills it', async () => {
    const [port, other] = [await freePort(), await freePort()];
    const attempt = startAppProcess({
      main: FIXTURE,
      args: ['healthy'],
      // Listens on another port: the health URL never answers.
      env: { FIXTURE_PORT: String(other) },
      healthUrl: `http://127.0.0.1:${port}/healthz`,
      startTimeoutMs: 3_000,
    });
    await expect(attempt).rejects.toThrow(/was not up in 3000 ms:\nfixture: listening/);
    // Killed: nothing listens on its port any more.
    expect(
      await fetch(`http://127.0.0.1:${other}/healthz`).then(
        (r) => r.status,
        () => 'refused',
      ),
    ).toBe('refused');
  }, 60_000);

  it('passes nodeArgs to node and a stdin pipe when asked', async () => {
    const port = await freePort();
    const app = await startAppProcess({
      main: FIXTURE,
      args: ['healthy'],
      nodeArgs: ['--expose-gc'],
      stdin: true,
      env: { FIXTURE_PORT: String(port) },
      healthUrl: `http://127.0.0.1:${port}/healthz`,
      stopGraceMs: 1_000,
    });
    started.push(app);
    app.child.stdin!.write('hello\n');
    const deadline = Date.now() + 10_000;
    while (!app.log().includes('fixture: read') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(app.log()).toContain('fixture: read hello, gc function');
  }, 60_000);

  it('stop() escalates to SIGKILL when the app ignores SIGTERM', async () => {
    const { app } = await start('stubborn');
    const begun = Date.now();
    expect(await app.stop(1_000)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(Date.now() - begun).toBeGreaterThanOrEqual(900);
    expect(app.log()).toContain('fixture: ignoring SIGTERM');
    expect(await app.stop()).toEqual({ code: null, signal: 'SIGKILL' });
  }, 60_000);

  it('kill() sends a raw signal (kill -9) and exited() reports it', async () => {
    const { app } = await start('healthy');
    app.kill('SIGKILL');
    expect(await app.exited()).toEqual({ code: null, signal: 'SIGKILL' });
    app.kill('SIGKILL'); // no-op once gone
    expect(await app.stop()).toEqual({ code: null, signal: 'SIGKILL' });
  }, 60_000);

  describe('on ports chosen by a function', () => {
    const occupied: Server[] = [];
    afterAll(async () => {
      await Promise.all(occupied.map((s) => new Promise((r) => s.close(r))));
    });

    /** A port another process holds (as a parallel test worker would, between two binds). */
    const takenPort = async () => {
      const port = await freePort();
      const server = createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      occupied.push(server);
      return port;
    };
    const on = (port: number, mode = 'healthy'): StartAppProcessOptions => ({
      main: FIXTURE,
      args: [mode],
      env: { FIXTURE_PORT: String(port) },
      healthUrl: `http://127.0.0.1:${port}/healthz`,
      startTimeoutMs: 30_000,
      stopGraceMs: 1_000,
    });

    it('starts the app again on the next choice when the first port was taken first', async () => {
      const first = await takenPort();
      const choices: number[] = [];
      const app = await startAppProcess(async () => {
        choices.push(choices.length === 0 ? first : await freePort());
        return on(choices.at(-1)!);
      });
      started.push(app);
      expect(choices).toHaveLength(2);
      const second = choices[1]!;
      expect(app.options.env).toEqual({ FIXTURE_PORT: String(second) });
      expect((await fetch(`http://127.0.0.1:${second}/healthz`)).status).toBe(200);
      expect(app.log()).toContain('fixture: listening');
      expect(app.log()).not.toContain('EADDRINUSE'); // the log of the child that is up
    }, 60_000);

    it(`gives up after ${START_ATTEMPTS} starts that all find their port taken`, async () => {
      let calls = 0;
      const attempt = startAppProcess(async () => {
        calls += 1;
        return on(await takenPort());
      });
      await expect(attempt).rejects.toThrow(/exited 1 before it was up:[^]*EADDRINUSE/);
      expect(calls).toBe(START_ATTEMPTS);
    }, 90_000);

    it('does not start again when the child failed for another reason', async () => {
      let calls = 0;
      const attempt = startAppProcess(async () => {
        calls += 1;
        return on(await freePort(), 'crash');
      });
      await expect(attempt).rejects.toThrow(/exited 3 before it was up/);
      expect(calls).toBe(1);
    }, 60_000);

    it('hands each spawned child to onSpawn before it is up', async () => {
      const spawned: number[] = [];
      const first = await takenPort();
      let calls = 0;
      const app = await startAppProcess(async () => ({
        ...on(calls++ === 0 ? first : await freePort()),
        onSpawn: (child) => spawned.push(child.pid!),
      }));
      started.push(app);
      expect(spawned).toHaveLength(2);
      expect(spawned[1]).toBe(app.pid);
    }, 60_000);
  });

  it('runAppScript resolves on exit 0 and rejects with the output otherwise', async () => {
    await expect(runAppScript(FIXTURE, {}, { args: ['migrate'] })).resolves.toBeUndefined();
    await expect(
      runAppScript(FIXTURE, { FIXTURE_EXIT: '2' }, { args: ['migrate'] }),
    ).rejects.toThrow(/fixture-app\.ts exited 2:\nfixture: migration failed \(2\)/);
  }, 60_000);

  it('runAppScript kills a script that outlives its timeout', async () => {
    const port = await freePort();
    await expect(
      runAppScript(
        FIXTURE,
        { FIXTURE_PORT: String(port) },
        { args: ['stubborn'], timeoutMs: 3_000 },
      ),
    ).rejects.toThrow(/did not finish in 3000 ms/);
  }, 60_000);
});
