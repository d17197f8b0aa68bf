import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createInterface } from 'node:readline';

const COLORS = [36, 33, 35, 32, 34, 91, 92, 93, 94, 95, 96];

export interface ManagedProcess {
  name: string;
  /** The current child (a restarted process gets a new one). */
  child: ChildProcess;
  /** Settles when the process ends for good: a one-shot's exit, or any exit once stopping. */
  exited: Promise<number | null>;
  /** How many times it was restarted after dying. */
  restarts: number;
}

/**
 * When a process that died is started again, as Kubernetes restarts a crashed pod: 1 s, 2 s,
 * 4 s, … up to 30 s; a process that stayed up for a minute starts the count again.
 */
export const RESTART_BACKOFF = { firstMs: 1_000, maxMs: 30_000, healthyAfterMs: 60_000 } as const;

export function restartDelayMs(consecutiveCrashes: number): number {
  const exponent = Math.max(0, consecutiveCrashes - 1);
  return Math.min(RESTART_BACKOFF.maxMs, RESTART_BACKOFF.firstMs * 2 ** Math.min(exponent, 16));
}

/** Time, injected so the backoff is tested without sleeping. */
export interface ProcessGroupTimers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: ProcessGroupTimers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * The local stack's children: each line they print is prefixed with their name; one stop()
 * ends them all (SIGTERM, then SIGKILL after a grace period), and an unexpected exit is reported.
 * A process started with `restart: true` is started again after it dies, with backoff. Each exit
 * is logged in one line naming its code or signal and what follows (`exited (signal SIGKILL);
 * restarting in 1000 ms (restart 1)`, or `exited unexpectedly (code 1); not restarted`).
 */
export class ProcessGroup {
  private readonly processes: ManagedProcess[] = [];
  /** Restarts waiting for their backoff, with what ends the process if stop() cancels them. */
  private readonly pendingRestarts = new Map<unknown, () => void>();
  /** Processes restart() ended, with how long each stays down before it is started again. */
  private readonly askedRestarts = new Map<ManagedProcess, number>();
  private stopping = false;
  private color = 0;

  constructor(
    private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
    private readonly onUnexpectedExit: (name: string, code: number | null) => void = () =>
      undefined,
    private readonly timers: ProcessGroupTimers = realTimers,
  ) {}

  /** Runs a one-shot command (migrations, provisioning) to completion; its exit is expected. */
  async run(
    name: string,
    command: string,
    args: string[],
    options: SpawnOptions = {},
  ): Promise<number | null> {
    return this.start(name, command, args, options, { oneShot: true }).exited;
  }

  start(
    name: string,
    command: string,
    args: string[],
    options: SpawnOptions = {},
    { oneShot = false, restart = false } = {},
  ): ManagedProcess {
    const label = process.stdout.isTTY
      ? `\x1b[${COLORS[this.color++ % COLORS.length]}m[${name}]\x1b[0m`
      : `[${name}]`;
    let settle!: (code: number | null) => void;
    const exited = new Promise<number | null>((resolve) => (settle = resolve));
    let crashes = 0;
    const spawnChild = (): ChildProcess => {
      const startedAt = this.timers.now();
      const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
      for (const stream of [child.stdout, child.stderr]) {
        if (stream)
          createInterface({ input: stream }).on('line', (line) => this.write(`${label} ${line}`));
      }
      let ended = false;
      const onEnd = (code: number | null, signal: NodeJS.Signals | null = null) => {
        if (ended) return;
        ended = true;
        const downMs = this.askedRestarts.get(managed);
        const asked = this.askedRestarts.delete(managed);
        const how = signal ? `signal ${signal}` : `code ${code}`;
        if (this.stopping || oneShot || (!restart && !asked)) {
          if (!this.stopping && !oneShot) {
            this.write(`${label} exited unexpectedly (${how}); not restarted`);
            this.onUnexpectedExit(name, code);
          }
          settle(code);
          return;
        }
        let delay = 0;
        if (asked) {
          delay = downMs ?? 0;
          const when = delay === 0 ? 'now' : `in ${delay} ms`;
          this.write(
            `${label} exited (${how}); restarting ${when}, as asked (restart ${managed.restarts + 1})`,
          );
        } else {
          this.onUnexpectedExit(name, code);
          crashes =
            this.timers.now() - startedAt >= RESTART_BACKOFF.healthyAfterMs ? 1 : crashes + 1;
          delay = restartDelayMs(crashes);
          this.write(
            `${label} exited (${how}); restarting in ${delay} ms (restart ${managed.restarts + 1})`,
          );
        }
        const handle = this.timers.setTimeout(() => {
          this.pendingRestarts.delete(handle);
          if (this.stopping) {
            settle(code);
            return;
          }
          managed.restarts += 1;
          managed.child = spawnChild();
        }, delay);
        this.pendingRestarts.set(handle, () => settle(code));
      };
      child.on('exit', (code, signal) => onEnd(code, signal));
      child.on('error', (error) => {
        this.write(`${label} failed to start: ${error.message}`);
        onEnd(-1);
      });
      return child;
    };
    const managed: ManagedProcess = { name, child: spawnChild(), exited, restarts: 0 };
    this.processes.push(managed);
    return managed;
  }

  /**
   * The process started under that name: its current child (pid) and how often it was restarted,
   * so a fault test can kill it and see the group bring it back.
   */
  get(name: string): ManagedProcess | undefined {
    return this.processes.find((managed) => managed.name === name);
  }

  /**
   * Restarts a running process as an operator would (a database or broker restart): sends
   * `signal` and starts it again as soon as it has exited (or `downMs` after, for an outage
   * of that length), without backoff and without reporting an unexpected exit. Resolves once
   * the new child is spawned.
   */
  async restart(
    name: string,
    signal: NodeJS.Signals = 'SIGTERM',
    { downMs = 0 }: { downMs?: number } = {},
  ): Promise<ManagedProcess> {
    const managed = this.get(name);
    if (!managed) throw new Error(`no process ${name}`);
    const before = managed.child;
    if (before.exitCode !== null || before.signalCode !== null)
      throw new Error(`${name} is not running`);
    this.askedRestarts.set(managed, downMs);
    before.kill(signal);
    while (managed.child === before) {
      if (this.stopping) throw new Error(`stopping: ${name} was not restarted`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return managed;
  }

  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    for (const [handle, end] of this.pendingRestarts) {
      this.timers.clearTimeout(handle);
      end();
    }
    this.pendingRestarts.clear();
    // Apps first (reverse start order), so they drain before the broker and database go away.
    for (const managed of [...this.processes].reverse()) {
      if (managed.child.exitCode !== null || managed.child.signalCode !== null) {
        // Dead, maybe waiting for a restart that stop() just cancelled: it ends here.
        continue;
      }
      managed.child.kill('SIGTERM');
      const timer = setTimeout(() => managed.child.kill('SIGKILL'), graceMs);
      await managed.exited;
      clearTimeout(timer);
    }
  }
}
