import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Real apps as child processes, for tests that need a process of their own (a crash is a real
 * crash, an app under test talks to another app without importing its code). Scripts run as
 * production runs them in development: `node -r @swc-node/register <script>` from the
 * repository root.
 */

/** Settings added to the test process's environment (`undefined` leaves a variable out). */
export type AppEnv = Readonly<Record<string, string | undefined>>;

/** The repository root: the nearest folder above this file holding `nx.json`. */
export const REPOSITORY_ROOT = findRepositoryRoot(__dirname);

function findRepositoryRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'nx.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no nx.json above ${from}`);
  }
}

const DEFAULT_LOG_CHARS = 20_000;

function spawnScript(
  script: string,
  env: AppEnv,
  args: readonly string[] = [],
  nodeArgs: readonly string[] = [],
  stdin: 'ignore' | 'pipe' = 'ignore',
): ChildProcess {
  const merged: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete merged[name];
    else merged[name] = value;
  }
  return spawn(process.execPath, ['-r', '@swc-node/register', ...nodeArgs, script, ...args], {
    cwd: REPOSITORY_ROOT,
    env: merged,
    stdio: [stdin, 'pipe', 'pipe'],
  });
}

/** Keeps the last `limit` characters of the child's stdout and stderr, interleaved. */
function keepTail(child: ChildProcess, limit: number): () => string {
  let tail = '';
  const keep = (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-limit));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => tail;
}

export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

function exitOf(child: ChildProcess): Promise<ExitStatus> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

const describeExit = ({ code, signal }: ExitStatus) =>
  signal === null ? `exited ${code}` : `was killed by ${signal}`;

/**
 * Runs a one-shot script (a migration: `apps/<app>/src/migrate.ts`), path relative to the
 * repository root, with `env` added to the test's environment. Resolves when it exits 0;
 * rejects with the tail of its output when it exits otherwise or outlives `timeoutMs`
 * (default 120 s; it is then killed).
 */
export async function runAppScript(
  script: string,
  env: AppEnv = {},
  options: { timeoutMs?: number; args?: readonly string[] } = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const child = spawnScript(script, env, options.args);
  const log = keepTail(child, DEFAULT_LOG_CHARS);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  const exit = await exitOf(child);
  clearTimeout(timer);
  if (exit.code === 0) return;
  const why = timedOut ? `did not finish in ${timeoutMs} ms` : describeExit(exit);
  throw new Error(`${script} ${why}:\n${log()}`);
}

export interface StartAppProcessOptions {
  /** The entry point, relative to the repository root (`apps/<app>/src/main.ts`). */
  readonly main: string;
  /** Added to the test's environment (`undefined` leaves a variable out). */
  readonly env?: AppEnv;
  /** Polled with GET until it answers 2xx: the app is up (`http://127.0.0.1:<port>/healthz`). */
  readonly healthUrl: string;
  /**
   * How long the app may take to answer (default 60 s). A slow start is a busy machine, not a
   * failure: only a child that exits fails before this deadline.
   */
  readonly startTimeoutMs?: number;
  /** Between two polls of `healthUrl` (default 250 ms). */
  readonly pollMs?: number;
  /** `stop()` sends SIGKILL when the child has not exited this long after SIGTERM (default 5 s). */
  readonly stopGraceMs?: number;
  /** How many characters of stdout + stderr `log()` keeps (default 20 000). */
  readonly logChars?: number;
  /** Arguments after `main`. */
  readonly args?: readonly string[];
  /** Node's own arguments (flags, `-r` preloads), after `-r @swc-node/register`. */
  readonly nodeArgs?: readonly string[];
  /** Whether the child's stdin is a pipe (`child.stdin`); else it reads nothing. */
  readonly stdin?: boolean;
  /** Called with each child as it is spawned, before it is up (to read all its output). */
  readonly onSpawn?: (child: ChildProcess) => void;
}

/**
 * Options built on ports chosen now (with `freePort`), called again before every start. A port
 * `freePort` gave can be taken by another process before the child binds it (parallel test
 * workers): a child that exits with EADDRINUSE before it is up is started again on the ports of a
 * new choice, at most `START_ATTEMPTS` times in all.
 */
export type ChooseAppProcessOptions = () =>
  StartAppProcessOptions | Promise<StartAppProcessOptions>;

/** How many times `startAppProcess` starts a child whose port was taken (EADDRINUSE). */
export const START_ATTEMPTS = 3;

export interface AppProcess {
  /** The options it was started with (those of the last choice, when chosen). */
  readonly options: StartAppProcessOptions;
  readonly child: ChildProcess;
  readonly pid: number;
  /** The last characters the child wrote to stdout and stderr. */
  log(): string;
  /** Whether the child is still running. */
  running(): boolean;
  /** Sends `signal` (default SIGTERM) if the child is still running; does not wait. */
  kill(signal?: NodeJS.Signals): void;
  /** Resolves when the child has exited (at once if it has). */
  exited(): Promise<ExitStatus>;
  /**
   * SIGTERM, then SIGKILL if the child is still running after the grace period (`stopGraceMs`
   * unless given); resolves when it has exited. Idempotent: a later call waits for the same exit.
   */
  stop(graceMs?: number): Promise<ExitStatus>;
}

/**
 * Starts `main` as a child process from the repository root and resolves once `healthUrl`
 * answers 2xx. Rejects, with the tail of the child's output, when the child exits first or
 * the deadline passes (the child is then killed).
 *
 * Given a function instead (`ChooseAppProcessOptions`: options on ports it chooses), starts
 * again on a new choice when the child exits with EADDRINUSE before it is up, at most
 * `START_ATTEMPTS` times, and says so on stderr.
 */
export async function startAppProcess(
  options: StartAppProcessOptions | ChooseAppProcessOptions,
): Promise<AppProcess> {
  if (typeof options !== 'function') return startOnce(options);
  for (let attempt = 1; ; attempt++) {
    const chosen = await options();
    try {
      return await startOnce(chosen);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt >= START_ATTEMPTS) throw error;
      process.stderr.write(
        `startAppProcess: ${chosen.main} found a port taken (${error.line}), attempt ` +
          `${attempt} of ${START_ATTEMPTS}; starting it again on newly chosen ports\n`,
      );
    }
  }
}

/** The child exited before it was up, having found a port taken (`line`: where it said so). */
class PortTakenError extends Error {
  constructor(
    message: string,
    readonly line: string,
  ) {
    super(message);
  }
}

async function startOnce(options: StartAppProcessOptions): Promise<AppProcess> {
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const pollMs = options.pollMs ?? 250;
  const stopGraceMs = options.stopGraceMs ?? 5_000;
  const child = spawnScript(
    options.main,
    options.env ?? {},
    options.args,
    options.nodeArgs,
    options.stdin === true ? 'pipe' : 'ignore',
  );
  const log = keepTail(child, options.logChars ?? DEFAULT_LOG_CHARS);
  options.onSpawn?.(child);
  const exit = exitOf(child);
  // After the exit, stdout and stderr may still hold the child's last words (as EADDRINUSE).
  const outputRead = new Promise((resolve) => child.once('close', resolve));
  let exitStatus: ExitStatus | undefined;
  void exit.then((status) => (exitStatus = status));
  const running = () => exitStatus === undefined && child.exitCode === null && !child.signalCode;
  let stopping: Promise<ExitStatus> | undefined;
  const handle: AppProcess = {
    options,
    child,
    pid: child.pid ?? -1,
    log,
    running,
    kill: (signal = 'SIGTERM') => {
      if (running()) child.kill(signal);
    },
    exited: () => exit,
    stop: (graceMs = stopGraceMs) => {
      stopping ??= (async () => {
        if (!running()) return exit;
        child.kill('SIGTERM');
        const timer = setTimeout(() => handle.kill('SIGKILL'), graceMs);
        const status = await exit;
        clearTimeout(timer);
        return status;
      })();
      return stopping;
    },
  };

  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    const up = await fetch(options.healthUrl, { signal: AbortSignal.timeout(5_000) }).then(
      (r) => r.ok,
      () => false,
    );
    // Up while the child is running: another process holding its port may answer too.
    if (up && running()) return handle;
    if (!running()) {
      const status = await exit;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([outputRead, new Promise((r) => (timer = setTimeout(r, 2_000)))]);
      clearTimeout(timer);
      const message = `${options.main} ${describeExit(status)} before it was up:\n${log()}`;
      const taken = log()
        .split('\n')
        .find((line) => line.includes('EADDRINUSE'));
      throw taken === undefined
        ? new Error(message)
        : new PortTakenError(message, taken.trim().slice(0, 200));
    }
    if (Date.now() > deadline) {
      await handle.stop(0);
      throw new Error(`${options.main} was not up in ${startTimeoutMs} ms:\n${log()}`);
    }
    // Wait a poll, or less when the child exits meanwhile.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exit, new Promise((r) => (timer = setTimeout(r, pollMs)))]);
    clearTimeout(timer);
  }
}
