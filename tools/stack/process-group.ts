import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createInterface } from 'node:readline';

const COLORS = [36, 33, 35, 32, 34, 91, 92, 93, 94, 95, 96];

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

/**
 * The local stack's children: each line they print is prefixed with their name; one stop()
 * ends them all (SIGTERM, then SIGKILL after a grace period), and an unexpected exit is reported.
 */
export class ProcessGroup {
  private readonly processes: ManagedProcess[] = [];
  private stopping = false;
  private color = 0;

  constructor(
    private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
    private readonly onUnexpectedExit: (name: string, code: number | null) => void = () =>
      undefined,
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
    { oneShot = false } = {},
  ): ManagedProcess {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    const label = process.stdout.isTTY
      ? `\x1b[${COLORS[this.color++ % COLORS.length]}m[${name}]\x1b[0m`
      : `[${name}]`;
    for (const stream of [child.stdout, child.stderr]) {
      if (stream)
        createInterface({ input: stream }).on('line', (line) => this.write(`${label} ${line}`));
    }
    const exited = new Promise<number | null>((resolve) => {
      child.on('exit', (code) => {
        if (!this.stopping && !oneShot) this.onUnexpectedExit(name, code);
        resolve(code);
      });
      child.on('error', (error) => {
        this.write(`${label} failed to start: ${error.message}`);
        resolve(-1);
      });
    });
    const managed = { name, child, exited };
    this.processes.push(managed);
    return managed;
  }

  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    // Apps first (reverse start order), so they drain before the broker and database go away.
    for (const managed of [...this.processes].reverse()) {
      if (managed.child.exitCode !== null || managed.child.signalCode !== null) continue;
      managed.child.kill('SIGTERM');
      const timer = setTimeout(() => managed.child.kill('SIGKILL'), graceMs);
      await managed.exited;
      clearTimeout(timer);
    }
  }
}
