import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTestDatabase,
  deleteNatsNamespace,
  freePort,
  testNatsUrl,
  uniqueNatsPrefix,
  type TestDatabase,
} from '@meridian/testing';
import { dashboardEnv, dashboardOperatorEmail } from './dashboard';
import { stackLayout, type AppProcess, type StackLayout } from './layout';
import { httpOk } from './probe';
import { ProcessGroup, type ManagedProcess } from './process-group';
import { embeddedDatabaseUrl, startStack, type StackEndpoints } from './stack';

export interface Route {
  method: string;
  url: string;
}

export interface PrivateStackOptions {
  /** Names the database (`<name>_stack_…`) and the temp dir; lower case letters. */
  name: string;
  /** Process names of tools/stack/layout.ts to run (billing-ledger is always needed). */
  apps: readonly string[];
  /** Devnet network keys of the layout to run. */
  devnets: readonly string[];
  /** Extra environment for a process, by process name (e.g. GATEWAY_WORKERS for one gateway). */
  env?: Readonly<Record<string, Record<string, string>>>;
  /**
   * Postgres and NATS of the stack's own: the launcher's embedded PostgreSQL and nats-server on
   * free ports, data in the temp dir (the `npm start` fallback), so a test may restart them.
   * Otherwise the shared servers, with a database and NATS namespace of its own.
   */
  ownServers?: boolean;
  /**
   * Devnets dump their state this often (anvil `--state-interval`), so one killed with SIGKILL
   * comes back with its chain up to its last dump, as a node comes back with its database.
   */
  devnetStateIntervalSeconds?: number;
}

export interface PrivateStack {
  readonly endpoints: StackEndpoints;
  readonly layout: StackLayout;
  /** Base URL (`http://host:port`) of a stack process. */
  urlOf(process: string): string;
  /** The routes a process logged at start (platform-http "http routes"). */
  routesOf(process: string): Route[];
  grpcTargetOf(process: string): string;
  /** The database URL the apps use. */
  readonly databaseUrl: string;
  /** A process of the stack (app, devnet, nats, postgres): its current child and restarts. */
  process(name: string): ManagedProcess;
  /** Restarts a process as an operator would (ProcessGroup.restart), down `downMs` first. */
  restart(
    name: string,
    signal?: NodeJS.Signals,
    options?: { downMs?: number },
  ): Promise<ManagedProcess>;
  /** Every line the launcher logged about a process exiting and restarting (all, not a tail). */
  restartLog(): string[];
  /** Names of processes that exited since start, with their exit codes; empty when all live. */
  deaths(): string[];
  /** Throws naming every process that is dead or whose /healthz is not 200. */
  assertHealthy(): Promise<void>;
  /** The last lines the processes printed (for failure messages). */
  tail(lines?: number): string;
  stop(): Promise<void>;
}

/**
 * A stack of its own for one test file, started by the stack launcher itself (the code of
 * `npm start`): the named processes and devnets, each on a free port, on a database and NATS
 * namespace of its own (libs/testing), in a temp dir; stop() removes all three.
 */
export async function startPrivateStack(options: PrivateStackOptions): Promise<PrivateStack> {
  const db: TestDatabase | undefined = options.ownServers
    ? undefined
    : await createTestDatabase({ prefix: `${options.name}_stack` });
  const natsPrefix = uniqueNatsPrefix();
  const dir = mkdtempSync(join(tmpdir(), `meridian-${options.name}-`));
  const wanted = new Set(['billing-ledger', ...options.apps]);
  const layoutEnv: NodeJS.ProcessEnv = {
    ...process.env,
    STACK_DIR: dir,
    NATS_PREFIX: natsPrefix,
  };
  // A test's stack runs on its devnets, whatever UPSTREAMS the shell exports.
  delete layoutEnv['UPSTREAMS'];
  if (db) {
    layoutEnv['DATABASE_URL'] = db.url;
    layoutEnv['NATS_URL'] = testNatsUrl();
  } else {
    delete layoutEnv['DATABASE_URL'];
    delete layoutEnv['NATS_URL'];
    layoutEnv['STACK_PG_PORT'] = String(await freePort());
    layoutEnv['STACK_NATS_PORT'] = String(await freePort());
  }
  const base = stackLayout(layoutEnv);
  const apps: AppProcess[] = [];
  for (const app of base.apps.filter((candidate) => wanted.has(candidate.name))) {
    apps.push({
      ...app,
      httpPort: await freePort(),
      grpcPort: app.grpcPort === undefined ? undefined : await freePort(),
      env: { ...app.env, ...options.env?.[app.name] },
    });
  }
  const devnets = [];
  for (const devnet of base.devnets.filter((candidate) =>
    options.devnets.includes(candidate.network),
  ))
    devnets.push({
      ...devnet,
      port: await freePort(),
      stateIntervalSeconds: options.devnetStateIntervalSeconds,
    });
  // The dashboard's env names the other apps' URLs: from their free ports, not the layout's.
  const ported = base.apps.map((app) => apps.find((mine) => mine.name === app.name) ?? app);
  for (const app of apps)
    if (app.app === 'dashboard')
      app.env = {
        ...dashboardEnv(ported, base.host, base.root, dashboardOperatorEmail(layoutEnv)),
        ...options.env?.[app.name],
      };
  const layout: StackLayout = { ...base, apps, devnets };

  const output: string[] = [];
  const routes = new Map<string, Route[]>();
  const exits: string[] = [];
  const restartLines: string[] = [];
  const group = new ProcessGroup(
    (line) => {
      output.push(line);
      if (/^\S*\[[\w-]+\]\S* exited \(/.test(line)) restartLines.push(line);
      if (output.length > 2_000) output.splice(0, 1_000);
      const routeLog = /^\S*\[([\w-]+)\]\S* (\{.*"msg":"http routes".*\})$/.exec(line);
      if (routeLog)
        routes.set(routeLog[1]!, (JSON.parse(routeLog[2]!) as { routes: Route[] }).routes);
    },
    (name, code) => exits.push(`${name} (exit code ${code})`),
  );
  const cleanUp = async () => {
    await group.stop();
    if (db) {
      await db.drop().catch(() => undefined);
      await deleteNatsNamespace(testNatsUrl(), natsPrefix).catch(() => undefined);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const previousLevel = process.env['LOG_LEVEL'];
  // info: the route list is logged at info; the apps log no line per request.
  process.env['LOG_LEVEL'] = 'info';
  let endpoints: StackEndpoints;
  try {
    endpoints = await startStack(layout, group, (line) => output.push(`[stack] ${line}`));
  } catch (error) {
    await cleanUp();
    throw new Error(
      `${options.name} stack did not start: ${String(error)}\n${output.slice(-80).join('\n')}`,
    );
  } finally {
    if (previousLevel === undefined) delete process.env['LOG_LEVEL'];
    else process.env['LOG_LEVEL'] = previousLevel;
  }
  const appOf = (name: string) => {
    const app = layout.apps.find((candidate) => candidate.name === name);
    if (!app) throw new Error(`no process ${name} in the ${options.name} stack`);
    return app;
  };
  const stack: PrivateStack = {
    endpoints,
    layout,
    urlOf: (name) => `http://${layout.host}:${appOf(name).httpPort}`,
    routesOf: (name) => {
      const list = routes.get(name);
      if (!list) throw new Error(`${name} logged no "http routes" line`);
      return list;
    },
    grpcTargetOf: (name) => `${layout.host}:${appOf(name).grpcPort}`,
    databaseUrl: db?.url ?? embeddedDatabaseUrl(layout),
    process: (name) => {
      const managed = group.get(name);
      if (!managed) throw new Error(`no process ${name} in the ${options.name} stack`);
      return managed;
    },
    restart: (name, signal, restartOptions) => group.restart(name, signal, restartOptions),
    restartLog: () => [...restartLines],
    deaths: () => [...exits],
    async assertHealthy() {
      const problems = [...exits];
      for (const app of layout.apps) {
        const ok = await httpOk(`${stack.urlOf(app.name)}/healthz`).catch(() => false);
        if (!ok) problems.push(`${app.name}: /healthz did not answer 200`);
      }
      if (problems.length > 0)
        throw new Error(`unhealthy: ${problems.join('; ')}\n${stack.tail()}`);
    },
    tail: (lines = 60) => output.slice(-lines).join('\n'),
    stop: cleanUp,
  };
  return stack;
}
