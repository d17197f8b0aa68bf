import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProcessGroup } from './process-group';

/** The file naming the running stack's supervisor, in the stack directory. */
export const SUPERVISOR_PIDFILE = 'supervisor.pid';

/** Whether a process (`-pid`: a process group) exists, ours or not. */
function exists(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the stack directory for this supervisor: writes `<dir>/supervisor.pid`, or refuses
 * saying how to stop what runs there already: the supervisor named by the file (Ctrl-C where it
 * runs, or `kill <pid>`), or, when that one is gone, what is left of its process group (the
 * launcher makes the supervisor the group's leader, so the group's id is its pid): `kill --
 * -<pid>`. A file naming nothing alive is left over from a stop that never ran; it is replaced.
 * Returns the release, which removes the file if it still names this process.
 */
export function claimStackDir(dir: string, pid = process.pid): () => void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, SUPERVISOR_PIDFILE);
  let previous: number | undefined;
  try {
    previous = Number.parseInt(readFileSync(file, 'utf8'), 10);
  } catch {
    previous = undefined;
  }
  if (previous !== undefined && Number.isInteger(previous) && previous > 1 && previous !== pid) {
    if (exists(previous))
      throw new Error(
        `a stack is already running from ${dir} (supervisor pid ${previous}); stop it with ` +
          `Ctrl-C where it runs, or kill ${previous}`,
      );
    if (exists(-previous))
      throw new Error(
        `processes of a stack from ${dir} are still running, their supervisor (pid ${previous}) ` +
          `gone; stop them with kill -- -${previous}`,
      );
  }
  writeFileSync(file, `${pid}\n`);
  return () => {
    try {
      if (Number.parseInt(readFileSync(file, 'utf8'), 10) === pid) rmSync(file, { force: true });
    } catch {
      // Already gone.
    }
  };
}

export interface SupervisedStack {
  /** The stack directory: its pidfile goes there. */
  dir: string;
  /** Starts the stack's processes in `group`; resolves once it is up. */
  start(group: ProcessGroup, log: (line: string) => void): Promise<void>;
  log?: (line: string) => void;
}

/**
 * `npm start`'s supervisor (tools/stack/main.ts): one stack per directory (claimStackDir), every
 * child in one ProcessGroup, all stopped on SIGINT, SIGTERM or SIGHUP, and when the launcher that
 * started it (tools/stack/launch.js, through an IPC channel) is gone, even killed with SIGKILL.
 * If this process itself is killed with SIGKILL, the launcher ends what is left of its process
 * group. A stack that fails to start is stopped and the process exits 1.
 */
export async function superviseStack(stack: SupervisedStack): Promise<void> {
  const log = stack.log ?? ((line: string) => process.stdout.write(`[stack] ${line}\n`));
  let release: () => void;
  try {
    release = claimStackDir(stack.dir);
  } catch (error) {
    log(`failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
  const group = new ProcessGroup();
  let stopping = false;
  const shutdown = async (why: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    log(`${why}: stopping every child…`);
    await group.stop();
    release();
    // A grandchild its parent left behind (stopped by SIGKILL after the grace period): SIGTERM
    // to the process group this process leads under the launcher (no such group otherwise).
    // This process ignores it: it is stopping already.
    try {
      process.kill(-process.pid, 'SIGTERM');
    } catch {
      // Not a group's leader, or nothing left.
    }
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(signal, () => void shutdown(signal));
  if (process.channel) {
    // The launcher's IPC channel closes when it exits, however it ended.
    process.on('disconnect', () => void shutdown('the launcher is gone'));
    process.channel.unref();
  }

  try {
    await stack.start(group, log);
  } catch (error) {
    if (stopping) return;
    log(`failed: ${error instanceof Error ? error.message : String(error)}`);
    await shutdown('start failed', 1);
  }
}
