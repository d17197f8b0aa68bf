import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SUPERVISOR_PIDFILE } from './supervisor';

const root = resolve(__dirname, '../..');
const FIXTURE = 'tools/stack/supervisor.fixture.ts';

interface Pids {
  supervisor: number;
  app: number;
  server: number;
  wrapper: number;
  grandchild: number;
}

/** A process we started, with everything it printed. */
interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: Run[] = [];
const groups: number[] = [];

function run(command: string, args: string[], dir: string): Run {
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, STACK_DIR: dir, STACK_LEFTOVER_GRACE_MS: '3000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const handle = { child, output: () => text, exited };
  started.push(handle);
  return handle;
}

/** Polls real processes (they take real time to start and end). */
async function until(what: string, check: () => boolean, output: () => string = () => '') {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} not reached; output:\n${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function alive(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function up(handle: Run): Promise<Pids> {
  await until('the fixture stack up', () => /\[stack\] up \{/.test(handle.output()), handle.output);
  const pids = JSON.parse(/\[stack\] up (\{.*\})/.exec(handle.output())![1]!) as Pids;
  groups.push(pids.supervisor);
  return pids;
}

/** Nothing of the stack is left: no process of its group, none of its pids. */
async function allGone(pids: Pids, output: () => string) {
  await until(
    'every process of the stack gone',
    () => !alive(-pids.supervisor) && Object.values(pids).every((pid) => !alive(pid)),
    output,
  );
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'stack-supervisor-'));
});
afterEach(async () => {
  // Only what this file started: its launchers and npm, and the stacks' groups.
  for (const handle of started.splice(0))
    if (handle.child.exitCode === null) handle.child.kill('SIGKILL');
  for (const pgid of groups.splice(0)) if (alive(-pgid)) process.kill(-pgid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

// Each case starts node with swc a few times; on a loaded 2-core machine that takes seconds.
jest.setTimeout(60_000);

/**
 * `npm start` and what it starts, end to end on a miniature stack (supervisor.fixture.ts) run by
 * the real launcher (launch.js) and supervisor (supervisor.ts). QA: a signal to npm's process,
 * or kill -9 of the launcher, left every child running with ppid 1.
 */
describe('the stack launcher and supervisor leave no child behind', () => {
  it('SIGTERM to `npm start` reaches the supervisor, which stops every child', async () => {
    const npm = run('npm', ['start', '--', FIXTURE], dir);
    const pids = await up(npm);
    expect(readFileSync(join(dir, SUPERVISOR_PIDFILE), 'utf8').trim()).toBe(
      String(pids.supervisor),
    );
    npm.child.kill('SIGTERM');
    await allGone(pids, npm.output);
    expect(npm.output()).toContain('[stack] SIGTERM: stopping every child…');
    await npm.exited;
    expect(existsSync(join(dir, SUPERVISOR_PIDFILE))).toBe(false);
  });

  it('kill -9 of the supervisor: the launcher ends its process group', async () => {
    const launcher = run(process.execPath, ['tools/stack/launch.js', FIXTURE], dir);
    const pids = await up(launcher);
    process.kill(pids.supervisor, 'SIGKILL');
    await allGone(pids, launcher.output);
    expect(launcher.output()).toContain(
      `the supervisor (pid ${pids.supervisor}) ended (signal SIGKILL) with processes of the stack left`,
    );
    expect(await launcher.exited).toEqual({ code: 137, signal: null });
  });

  it('kill -9 of the launcher: the supervisor sees it gone and stops every child', async () => {
    const launcher = run(process.execPath, ['tools/stack/launch.js', FIXTURE], dir);
    const pids = await up(launcher);
    launcher.child.kill('SIGKILL');
    await allGone(pids, launcher.output);
    expect(launcher.output()).toContain('[stack] the launcher is gone: stopping every child…');
  });

  it("kill -9 of the launcher's parent (npm): the launcher stops the stack", async () => {
    const shell = run('sh', ['-c', `node tools/stack/launch.js ${FIXTURE} & wait`], dir);
    const pids = await up(shell);
    shell.child.kill('SIGKILL');
    await allGone(pids, shell.output);
    expect(shell.output()).toContain('[stack] SIGTERM: stopping every child…');
  });

  it('a crash is one line naming the signal and the restart delay', async () => {
    const launcher = run(process.execPath, ['tools/stack/launch.js', FIXTURE], dir);
    const pids = await up(launcher);
    process.kill(pids.app, 'SIGKILL');
    await until('the restart logged', () => /\[app\] exited/.test(launcher.output()));
    const lines = launcher.output().split('\n');
    expect(lines.filter((line) => /\bapp\b.*exited/.test(line))).toEqual([
      '[app] exited (signal SIGKILL); restarting in 1000 ms (restart 1)',
    ]);
    launcher.child.kill('SIGTERM');
    await allGone(pids, launcher.output);
  });

  it('a second start over a running stack, or over its leftovers, says which and how to stop it', async () => {
    // The supervisor alone as the launcher starts it (its group's leader), without the launcher
    // that would clean up after it: kill -9 leaves its children running.
    const first = spawn(process.execPath, ['-r', '@swc-node/register', FIXTURE], {
      cwd: root,
      env: { ...process.env, STACK_DIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let text = '';
    first.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const pids = await up({ child: first, output: () => text, exited: new Promise(() => {}) });

    const again = run(process.execPath, ['tools/stack/launch.js', FIXTURE], dir);
    expect(await again.exited).toEqual({ code: 1, signal: null });
    expect(again.output()).toContain(
      `[stack] failed: a stack is already running from ${dir} (supervisor pid ${pids.supervisor}); stop it with Ctrl-C where it runs, or kill ${pids.supervisor}`,
    );

    process.kill(pids.supervisor, 'SIGKILL');
    await until('the supervisor gone', () => !alive(pids.supervisor));
    expect(alive(pids.app) && alive(pids.grandchild)).toBe(true);
    const third = run(process.execPath, ['tools/stack/launch.js', FIXTURE], dir);
    expect(await third.exited).toEqual({ code: 1, signal: null });
    expect(third.output()).toContain(
      `[stack] failed: processes of a stack from ${dir} are still running, their supervisor (pid ${pids.supervisor}) gone; stop them with kill -- -${pids.supervisor}`,
    );
    process.kill(-pids.supervisor, 'SIGTERM');
    await allGone(pids, third.output);
  });
});
