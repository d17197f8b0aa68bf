import { spawn, type ChildProcess } from 'node:child_process';
import { anvilBinaryPath } from '@meridian/platform-anvil';

export { anvilBinaryPath };
import { freePort } from './free-port';

export interface AnvilOptions {
  chainId: number;
  /** Defaults to a free port. */
  port?: number;
  /** Seconds between blocks; omitted = a block per transaction (anvil's auto-mining). */
  blockTime?: number;
  /** Extra anvil arguments (e.g. ['--accounts', '2']). */
  args?: readonly string[];
  /** How long to wait for eth_chainId to answer. */
  readyTimeoutMs?: number;
}

export interface AnvilInstance {
  readonly url: string;
  readonly wsUrl: string;
  readonly port: number;
  readonly chainId: number;
  /** Stops the node (SIGTERM, then SIGKILL after 5 s). Safe to call twice. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A test that forgets stop() must not leave devnets behind after the worker exits.
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

async function chainIdOf(url: string): Promise<string | undefined> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      signal: AbortSignal.timeout(1_000),
    });
    const body = (await response.json()) as { result?: string };
    return body.result;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    if (!(await waitForExit(child, 5_000))) {
      child.kill('SIGKILL');
      await waitForExit(child, 5_000);
    }
  }
  running.delete(child);
}

async function startOnce(
  options: AnvilOptions,
  port: number,
): Promise<AnvilInstance | 'port_in_use'> {
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--chain-id',
    String(options.chainId),
    '--quiet',
  ];
  if (options.blockTime !== undefined) args.push('--block-time', String(options.blockTime));
  if (options.args) args.push(...options.args);

  const child = spawn(anvilBinaryPath(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  installExitHook();
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  // Let a test runner exit even if a test forgot stop(); the exit hook still kills the node.
  child.unref();
  for (const stream of [child.stdout, child.stderr])
    (stream as unknown as { unref?: () => void } | null)?.unref?.();

  const url = `http://127.0.0.1:${port}`;
  const expected = `0x${options.chainId.toString(16)}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 20_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      running.delete(child);
      if (/address already in use|in use/i.test(output)) return 'port_in_use';
      throw new Error(
        `anvil exited (${child.exitCode ?? child.signalCode}) before answering: ${output.trim()}`,
      );
    }
    const answer = await chainIdOf(url);
    if (answer === expected) {
      return {
        url,
        wsUrl: `ws://127.0.0.1:${port}`,
        port,
        chainId: options.chainId,
        stop: () => stopChild(child),
      };
    }
    if (answer !== undefined) {
      await stopChild(child);
      throw new Error(
        `port ${port} answers chain id ${answer}, expected ${expected} (another node?)`,
      );
    }
    await sleep(50);
  }
  await stopChild(child);
  throw new Error(
    `anvil did not answer eth_chainId on ${url} within the timeout: ${output.trim()}`,
  );
}

/** Starts a local EVM devnet and waits until it answers eth_chainId with the requested id. */
export async function startAnvil(options: AnvilOptions): Promise<AnvilInstance> {
  const attempts = options.port === undefined ? 3 : 1;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const port = options.port ?? (await freePort());
    const started = await startOnce(options, port);
    if (started !== 'port_in_use') return started;
    if (options.port !== undefined)
      throw new Error(`anvil could not bind port ${port}: address already in use`);
  }
  throw new Error(`anvil could not bind a free port after ${attempts} attempts`);
}
