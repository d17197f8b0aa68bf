import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { freePort, startAppProcess, type AppEnv, type AppProcess } from '@meridian/testing';

/**
 * The gateway as production runs it (`main.ts`, GATEWAY_WORKERS > 1: a primary and its worker
 * processes) as a child of the test, on ports `freePort()` chose, through `startAppProcess`.
 *
 * A port taken between the choice and the bind (parallel jest workers) fails a worker, not the
 * primary, which would replace it forever: the first EADDRINUSE line before any worker listens
 * stops the replica (SIGTERM), so that `startAppProcess` starts it again on new ports.
 */
export interface GatewayLogLine {
  msg?: string;
  pid?: number;
  worker?: number;
  status?: number;
  account?: string;
}

export interface GatewayProcess {
  /** The primary. */
  readonly app: AppProcess;
  readonly url: string;
  readonly port: number;
  /** Every JSON line the replica (primary and workers) wrote to stdout, in order. */
  readonly lines: GatewayLogLine[];
  /** The lines of workers saying they listen, in order. */
  listening(): GatewayLogLine[];
}

const LISTENING = 'rpc-gateway listening';

/**
 * Starts the replica with `env` (HTTP_HOST 127.0.0.1, HTTP_PORT and, unless GRPC_ENABLED is
 * 'false', GRPC_PORT chosen here) and resolves once `workers` workers said they listen. Rejects
 * with the tail of its output when it exits first or `startTimeoutMs` passes. Its stderr goes to
 * the test's. `choosePort`: where the ports come from (`freePort`; a test hands a taken one).
 */
export async function startGatewayProcess(
  env: AppEnv,
  options: { workers: number; startTimeoutMs: number; choosePort?: () => Promise<number> },
): Promise<GatewayProcess> {
  const choosePort = options.choosePort ?? freePort;
  const lines: GatewayLogLine[] = [];
  const listening = () => lines.filter((l) => l.msg === LISTENING);
  const deadline = Date.now() + options.startTimeoutMs;
  let latest: ChildProcess | undefined;
  const onSpawn = (child: ChildProcess) => {
    // The lines of the child that comes up, not of one that found its port taken.
    latest = child;
    lines.length = 0;
    child.stderr!.pipe(process.stderr, { end: false });
    const portTaken = (text: string) => {
      if (text.includes('EADDRINUSE') && child === latest && listening().length === 0)
        child.kill('SIGTERM');
    };
    createInterface({ input: child.stderr! }).on('line', portTaken);
    createInterface({ input: child.stdout! }).on('line', (text) => {
      portTaken(text);
      if (child !== latest) return;
      try {
        lines.push(JSON.parse(text) as GatewayLogLine);
      } catch {
        // not a log line
      }
    });
  };
  const app = await startAppProcess(async () => {
    const port = await choosePort();
    const grpc = env['GRPC_ENABLED'] === 'false' ? {} : { GRPC_PORT: String(await choosePort()) };
    return {
      main: 'apps/rpc-gateway/src/main.ts',
      env: { HTTP_HOST: '127.0.0.1', HTTP_PORT: String(port), ...grpc, ...env },
      healthUrl: `http://127.0.0.1:${port}/healthz`,
      startTimeoutMs: Math.max(1_000, deadline - Date.now()),
      onSpawn,
    };
  });
  // Up is one worker answering; the callers count on every worker.
  while (listening().length < options.workers) {
    if (!app.running()) {
      const { code } = await app.exited();
      throw new Error(`gateway exited early (${code}):\n${app.log()}`);
    }
    if (Date.now() > deadline) {
      await app.stop(0);
      throw new Error(
        `gateway: ${listening().length} of ${options.workers} workers listening in ` +
          `${options.startTimeoutMs} ms:\n${app.log()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const port = Number(app.options.env!['HTTP_PORT']);
  return { app, url: `http://127.0.0.1:${port}`, port, lines, listening };
}
