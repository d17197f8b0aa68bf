// The deployment files, validated offline: every object `kubectl apply -k` would send for each
// overlay (Kubernetes schemas, unknown fields, wiring) and docker-compose.yml (Compose
// Specification schema), through deploy/validate.mjs; plus the contract with the apps: the
// environment each app gets from the manifests and from compose passes that app's own config
// schema (apps/<app>/src/config/config.ts).
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parsePartition } from '@meridian/contracts';
import { transportSettingsProblem } from '@meridian/platform-config';
import { TestPki } from '@meridian/testing';
import { parse, parseAllDocuments } from 'yaml';

const root = join(__dirname, '..');
const validator = join(__dirname, 'validate.mjs');
const APPS = [
  'audit-api',
  'rpc-gateway',
  'chain-indexer',
  'webhook-matcher',
  'delivery-worker',
  'billing-ledger',
  'dashboard',
] as const;
const REGIONS = ['eu', 'us', 'asia', 'shared'] as const;

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * deploy/validate.mjs with these arguments: its exit code and output. One `--serve` process runs
 * every validation of this file (it loads the schemas and TypeScript's declaration files once).
 */
function runValidator(...args: string[]): Promise<{ status: number | null; out: string }> {
  validatorProcess ??= startValidator();
  return validatorProcess.run(args);
}

interface ValidatorProcess {
  run(args: string[]): Promise<{ status: number | null; out: string }>;
  stop(): Promise<void>;
}

let validatorProcess: ValidatorProcess | undefined;

function startValidator(): ValidatorProcess {
  const child = spawn(process.execPath, [validator, '--serve'], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const waiting: Array<{
    resolve: (value: { status: number | null; out: string }) => void;
    reject: (error: Error) => void;
  }> = [];
  let stderr = '';
  let buffered = '';
  let exit: string | undefined;
  child.stdin.on('error', () => undefined); // a dead process: reported by 'exit' below
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      waiting.shift()?.resolve(JSON.parse(line) as { status: number | null; out: string });
    }
  });
  const exited = new Promise<void>((resolve) =>
    child.on('exit', (code, signal) => {
      exit = `validate.mjs --serve exited (${code ?? signal}): ${stderr}`;
      for (const w of waiting.splice(0)) w.reject(new Error(exit));
      resolve();
    }),
  );
  return {
    run: (args) =>
      new Promise((resolve, reject) => {
        if (exit !== undefined) return reject(new Error(exit));
        waiting.push({ resolve, reject });
        child.stdin.write(`${JSON.stringify(args)}\n`);
      }),
    stop: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

afterAll(async () => {
  await validatorProcess?.stop();
});

function render(dir: string): Obj[] {
  const result = spawnSync('kubectl', ['kustomize', dir], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`kubectl kustomize ${dir}: ${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((doc) => doc.toJS() as Obj)
    .filter(Boolean);
}

function overlayDirs(): string[] {
  const parent = join(__dirname, 'overlays');
  return readdirSync(parent).filter((name) => existsSync(join(parent, name, 'kustomization.yaml')));
}

describe('deploy: manifests and compose file', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'meridian-deploy-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('validates every overlay, the example secrets and docker-compose.yml', async () => {
    const { status, out } = await runValidator();
    const overlays = overlayDirs();
    expect(overlays).toEqual(expect.arrayContaining(['namespace', 'core', ...REGIONS]));
    for (const overlay of overlays)
      expect(out).toContain(`ok   kustomize deploy/overlays/${overlay} (`);
    expect(out).toContain('ok   kustomize deploy/secrets/example (');
    expect(out).toContain('ok   compose docker-compose.yml (');
    expect(out).toMatch(new RegExp(`^${overlays.length + 2} passed, 0 failed$`, 'm'));
    expect(status).toBe(0);
  });

  it('each object has one owner: the namespace overlay alone renders the Namespace, no Secret kustomization or other overlay', () => {
    const owners = new Map<string, string[]>();
    const targets = [...overlayDirs().map((o) => join('overlays', o)), join('secrets', 'example')];
    for (const target of targets)
      for (const o of render(join(__dirname, target))) {
        const key = `${o.apiVersion.split('/')[0]} ${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
        owners.set(key, [...(owners.get(key) ?? []), target]);
      }
    const shared = [...owners].filter(([, list]) => list.length > 1);
    expect(shared).toEqual([]);
    expect(owners.get('v1 Namespace /meridian')).toEqual([join('overlays', 'namespace')]);
    for (const secret of render(join(__dirname, 'secrets', 'example')))
      expect([secret.kind, secret.metadata.namespace]).toEqual(['Secret', 'meridian']);
  });

  it('fails when two targets render one object (an apply of one would undo patches of the other)', async () => {
    // The layout before the namespace overlay: core rendered the namespace-wide policies too.
    const dir = join(tmp, 'core-with-namespace-policies');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      [
        'resources:',
        `  - ${relative(dir, join(__dirname, 'overlays', 'core'))}`,
        `  - ${relative(dir, join(__dirname, 'base', 'network-policies', 'namespace'))}`,
      ].join('\n'),
    );
    const namespace = join(__dirname, 'overlays', 'namespace');
    const { status, out } = await runValidator('--kustomize', namespace, '--kustomize', dir);
    expect(out).toContain('FAIL kustomize deploy/overlays/namespace');
    expect(out).toMatch(
      /NetworkPolicy meridian\/default-deny-ingress: also rendered by .*core-with-namespace-policies/,
    );
    expect(out).toMatch(
      /NetworkPolicy meridian\/allow-prometheus-scrape: also rendered by deploy\/overlays\/namespace/,
    );
    expect(out).toMatch(/^0 passed, 2 failed$/m);
    expect(status).toBe(1);
    // Each alone is valid: the rule is about the set applied.
    expect((await runValidator('--kustomize', dir)).status).toBe(0);
  });

  it("a region's ipBlock patch on its gateways' policy is in no other overlay's render, so no other apply undoes it", async () => {
    const dir = join(tmp, 'eu-with-load-balancer');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      [
        'resources:',
        `  - ${relative(dir, join(__dirname, 'overlays', 'eu'))}`,
        'patches:',
        '  - target: {kind: NetworkPolicy, name: rpc-gateway-eu}',
        '    patch: |-',
        '      - op: add',
        '        path: /spec/ingress/-',
        '        value: {from: [{ipBlock: {cidr: 203.0.113.0/24}}], ports: [{port: grpc}]}',
      ].join('\n'),
    );
    const patched = render(dir).find((o) => o.kind === 'NetworkPolicy')!;
    expect(patched.metadata.name).toBe('rpc-gateway-eu');
    expect(JSON.stringify(patched.spec.ingress)).toContain('203.0.113.0/24');
    for (const overlay of overlayDirs().filter((o) => o !== 'eu'))
      expect({
        overlay,
        policies: render(join(__dirname, 'overlays', overlay))
          .filter((o) => o.kind === 'NetworkPolicy')
          .map((o) => o.metadata.name),
      }).toEqual({ overlay, policies: expect.not.arrayContaining(['rpc-gateway-eu']) });
    expect((await runValidator('--kustomize', dir)).status).toBe(0);
  });

  it('fails on a broken manifest: wrong type, unknown field, dangling references, pods not spread', async () => {
    // The real eu overlay with a patch that breaks it in five independent ways.
    const dir = join(tmp, 'broken-overlay');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      [
        'resources:',
        `  - ${relative(dir, join(__dirname, 'overlays', 'eu'))}`,
        'patches:',
        '  - patch: |-',
        '      apiVersion: apps/v1',
        '      kind: Deployment',
        '      metadata: {name: rpc-gateway-eu, namespace: meridian}',
        '      spec:',
        '        template:',
        '          spec:',
        '            topologySpreadConstraints: null',
        '            containers:',
        '              - name: rpc-gateway',
        '                ports:',
        '                  - {name: grpc, containerPort: "9090x"}',
        '                readinessProbe: {httpGett: {path: /readyz, port: http}}',
        '                envFrom:',
        '                  - configMapRef: {name: no-such-config}',
        '                env:',
        '                  - name: LOG_LEVEL_COPY',
        '                    valueFrom: {configMapKeyRef: {name: meridian-common, key: NO_SUCH_KEY}}',
      ].join('\n'),
    );
    const { status, out } = await runValidator('--kustomize', dir);
    expect(out).toContain('FAIL kustomize');
    expect(out).toMatch(/containerPort must be integer/);
    expect(out).toMatch(/'"httpGett"' does not exist in type 'IProbe'/);
    expect(out).toMatch(/ConfigMap no-such-config is not in the rendered set/);
    expect(out).toMatch(/key NO_SUCH_KEY is not in ConfigMap meridian-common/);
    expect(out).toMatch(
      /topologySpreadConstraints must spread the pods over kubernetes.io\/hostname/,
    );
    expect(out).toMatch(
      /topologySpreadConstraints must spread the pods over topology.kubernetes.io\/zone/,
    );
    expect(out).toMatch(/^0 passed, 1 failed$/m);
    expect(status).toBe(1);
  });

  it('fails on an object of an unknown kind or missing required fields', async () => {
    const file = join(tmp, 'bad.yaml');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Frobnicator\nmetadata: {name: x}\n---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: y}\nspec: {}\n',
    );
    const { status, out } = await runValidator('--manifest', file);
    expect(out).toMatch(/Frobnicator x: no schema for v1 Frobnicator/);
    expect(out).toMatch(/Job y: .*must have required property template/);
    expect(status).toBe(1);
  });

  it('fails on an invalid compose file', async () => {
    const file = join(tmp, 'compose.yml');
    writeFileSync(
      file,
      [
        'services:',
        '  app:',
        '    image: meridian:local',
        '    healthcheck: {test: ["CMD", "true"], interval: 10 seconds}',
        '    depends_on: {db: {condition: service_ready}}',
        '    restart_policy: always',
      ].join('\n'),
    );
    const { status, out } = await runValidator('--compose', file);
    expect(out).toContain('FAIL compose');
    expect(out).toMatch(/healthcheck\/interval must match format "duration"/);
    expect(out).toMatch(/must NOT have additional properties \(restart_policy\)/);
    expect(out).toMatch(/depends_on: unknown service db/);
    expect(status).toBe(1);
  });

  it("fails on a compose default that reaches a gateway without an access token (audit-api's chain reads all 404)", async () => {
    const file = join(tmp, 'compose-gateway-url.yml');
    const compose = (value: string) =>
      [
        'services:',
        '  gw:',
        '    image: meridian:local',
        '    environment: {APP: rpc-gateway}',
        '  audit:',
        '    image: meridian:local',
        '    environment:',
        '      APP: audit-api',
        `      AUDIT_RPC_URL: ${value}`,
      ].join('\n');
    writeFileSync(file, compose("'${AUDIT_RPC_URL:-http://gw:8080}'"));
    const { status, out } = await runValidator('--compose', file);
    expect(out).toMatch(
      /environment\/AUDIT_RPC_URL: http:\/\/gw:8080 is gw without an access token in its path/,
    );
    expect(status).toBe(1);
    for (const fine of ["'${AUDIT_RPC_URL:-}'", "'${AUDIT_RPC_URL:-http://gw:8080/t0k3n/}'"]) {
      writeFileSync(file, compose(fine));
      expect({ fine, ...(await runValidator('--compose', file)) }).toMatchObject({
        fine,
        status: 0,
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Contract with the apps' config schemas.

interface ConfigModule {
  configSchema: {
    shape: Record<string, unknown>;
    safeParse(env: Record<string, string>): {
      success: boolean;
      error?: { issues: Array<{ path: PropertyKey[]; message: string }> };
    };
  };
}

async function loadConfig(app: string): Promise<ConfigModule> {
  // The config file is the app's published contract for its environment.
  const path = join(root, 'apps', app, 'src', 'config', 'config.ts');
  return (await import(path)) as ConfigModule;
}

/** Variables that the image, the entrypoint or Node itself reads, not the app config. */
/** Read by the image's entrypoint or Kubernetes itself (POD_INDEX: `$(POD_INDEX)` expansion). */
const RUNTIME_ONLY = new Set(['APP', 'NODE_OPTIONS', 'POD_INDEX']);
/** A StatefulSet pod's ordinal, as the first pod gets it. */
const POD_INDEX_FIELD = "metadata.labels['apps.kubernetes.io/pod-index']";

function expectEnvAccepted(config: ConfigModule, env: Record<string, string>, where: string): void {
  // The image sets NODE_ENV=production (Dockerfile), so the rules of production apply.
  const result = config.configSchema.safeParse({ NODE_ENV: 'production', ...env });
  const issues = result.success
    ? []
    : result.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  expect({ where, issues }).toEqual({ where, issues: [] });
  const unknown = Object.keys(env).filter(
    (name) => !(name in config.configSchema.shape) && !RUNTIME_ONLY.has(name),
  );
  expect({ where, unknown }).toEqual({ where, unknown: [] });
}

/** The mark of deploy/secrets/example's placeholders, which the apps refuse as secrets. */
const PLACEHOLDER = 'CHANGE-ME';
const FILLED = 'REPLACED0'; // as long as the mark, so lengths and encodings keep their form

/**
 * A placeholder value of deploy/secrets/example as an operator fills it in: the mark replaced
 * in the text, or in the bytes a base64 value decodes to (the example's keys). The contract test
 * then checks the example's form (URLs, lengths, 32-byte keys), not its placeholders.
 */
function filledIn(value: string): string {
  const mark = new RegExp(PLACEHOLDER, 'gi');
  if (mark.test(value)) return value.replace(mark, FILLED);
  const bytes = Buffer.from(value, 'base64');
  if (bytes.toString('base64') === value && bytes.toString('latin1').match(mark))
    return Buffer.from(bytes.toString('latin1').replace(mark, FILLED), 'latin1').toString('base64');
  return value;
}

/** The pod template's spec of a workload (a CronJob's is inside its job template). */
function podSpecOf(workload: Obj): Obj {
  return workload.kind === 'CronJob'
    ? workload.spec.jobTemplate.spec.template.spec
    : workload.spec.template.spec;
}

function containerEnv(container: Obj, objects: Obj[], secrets: Obj[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) {
      const cm = objects.find(
        (o) => o.kind === 'ConfigMap' && o.metadata.name === source.configMapRef.name,
      );
      Object.assign(env, cm?.data ?? {});
    }
    if (source.secretRef) {
      const secret = secrets.find((o) => o.metadata.name === source.secretRef.name);
      for (const [k, v] of Object.entries<string>(secret?.data ?? {}))
        env[k] = filledIn(Buffer.from(v, 'base64').toString('utf8'));
    }
  }
  for (const item of container.env ?? []) {
    const key = item.valueFrom?.configMapKeyRef;
    if (item.valueFrom?.fieldRef?.fieldPath === POD_INDEX_FIELD) env[item.name] = '0';
    else if (key)
      env[item.name] = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === key.name)
        ?.data?.[key.key];
    // Kubernetes expands $(NAME) of a variable defined before it.
    else
      env[item.name] = String(item.value).replace(/\$\(([A-Z_]+)\)/g, (ref, name: string) =>
        name in env ? env[name]! : ref,
      );
  }
  return env;
}

describe('deploy: environment matches the apps config schemas', () => {
  const secrets = render(join(__dirname, 'secrets', 'example')).filter((o) => o.kind === 'Secret');
  const core = render(join(__dirname, 'overlays', 'core'));

  it.each(APPS.filter((app) => app !== 'rpc-gateway'))('core overlay: %s', async (app) => {
    const config = await loadConfig(app);
    const deployment = core.find(
      (o) => (o.kind === 'Deployment' || o.kind === 'StatefulSet') && o.metadata.name === app,
    );
    expect(deployment).toBeDefined();
    const container = deployment!.spec.template.spec.containers[0];
    expect(container.args).toEqual(['serve']);
    expectEnvAccepted(config, containerEnv(container, core, secrets), `overlays/core ${app}`);
  });

  /** A partitioned role: its StatefulSet, its `i/n` variable, and who else must know n. */
  const PARTITIONED = [
    // ADR 0422: replica i owns the accounts of partition i; one CHAIN durable each.
    {
      app: 'webhook-matcher',
      setting: 'MATCHER_PARTITION',
      count: [['Job', 'MATCHER_PARTITIONS']],
    },
    // ADR 0432: worker i reads route i; the matcher publishes on n routes; one durable each.
    {
      app: 'delivery-worker',
      setting: 'DELIVERY_PARTITION',
      count: [
        ['Job', 'DELIVERY_PARTITIONS'],
        ['webhook-matcher', 'DELIVERY_PARTITIONS'],
      ],
    },
    // ADR 0107: replica i applies the usage partitions k with k mod n = i; nobody else knows n
    // (the producers route by the fixed usage partitions; below).
    { app: 'billing-ledger', setting: 'LEDGER_PARTITION', count: [] },
  ] as const;

  it.each(PARTITIONED)(
    'core overlay: $app pod i is partition i/n, n = its replicas = what provisioning and publishers use',
    ({ app, setting, count }) => {
      const statefulSet = core.find((o) => o.kind === 'StatefulSet' && o.metadata.name === app)!;
      const replicas: number = statefulSet.spec.replicas;
      expect(replicas).toBeGreaterThan(1);
      const env = (statefulSet.spec.template.spec.containers[0].env ?? []) as Obj[];
      expect(env.find((e) => e.name === 'POD_INDEX')?.valueFrom?.fieldRef?.fieldPath).toBe(
        POD_INDEX_FIELD,
      );
      const partition = env.find((e) => e.name === setting)!.value as string;
      for (let i = 0; i < replicas; i++)
        expect(parsePartition(partition.replace('$(POD_INDEX)', String(i)))).toEqual({
          index: i,
          count: replicas,
        });
      for (const [holder, variable] of count) {
        const object =
          holder === 'Job'
            ? core.find((o) => o.kind === 'Job' && o.metadata.name === 'meridian-provision-streams')
            : core.find((o) => o.kind === 'StatefulSet' && o.metadata.name === holder);
        const holderEnv = containerEnv(object!.spec.template.spec.containers[0], core, secrets);
        expect({ holder, [variable]: Number(holderEnv[variable]) }).toEqual({
          holder,
          [variable]: replicas,
        });
      }
    },
  );

  it.each(['billing-ledger', 'webhook-matcher'])(
    "core overlay: %s's pool settings are set, and deploy/README's Postgres sizing row is its replicas x that pool",
    async (app) => {
      const statefulSet = core.find((o) => o.kind === 'StatefulSet' && o.metadata.name === app)!;
      const env = containerEnv(statefulSet.spec.template.spec.containers[0], core, secrets);
      const pool = Number(env['DATABASE_POOL_SIZE']);
      expect(pool).toBeGreaterThan(0);
      expect(Number(env['DATABASE_ACQUIRE_TIMEOUT_MS'])).toBeGreaterThan(0);
      // The manifests change nothing the app did before: they write its defaults down.
      const defaults = (await loadConfig(app)).configSchema.shape as Record<
        string,
        { parse(value: undefined): unknown }
      >;
      expect({
        DATABASE_POOL_SIZE: pool,
        DATABASE_ACQUIRE_TIMEOUT_MS: Number(env['DATABASE_ACQUIRE_TIMEOUT_MS']),
      }).toEqual({
        DATABASE_POOL_SIZE: defaults['DATABASE_POOL_SIZE']!.parse(undefined),
        DATABASE_ACQUIRE_TIMEOUT_MS: defaults['DATABASE_ACQUIRE_TIMEOUT_MS']!.parse(undefined),
      });
      const readme = readFileSync(join(__dirname, 'README.md'), 'utf8');
      const row = new RegExp(
        `^\\| ${app} +\\| (\\d+) +\\| (\\d+) \\(StatefulSet[^|]*\\| (\\d+) +\\|$`,
        'm',
      ).exec(readme);
      expect(row?.slice(1).map(Number)).toEqual([
        pool,
        statefulSet.spec.replicas,
        pool * statefulSet.spec.replicas,
      ]);
    },
  );

  it.each(REGIONS)(
    "region overlay %s: rpc-gateway is not told billing-ledger's replica count (a change of it rolls billing-ledger alone, ADR 0107)",
    (region) => {
      const objects = render(join(__dirname, 'overlays', region));
      const gateway = objects.find(
        (o) => o.kind === 'Deployment' && o.metadata.name === `rpc-gateway-${region}`,
      )!;
      const env = containerEnv(gateway.spec.template.spec.containers[0], objects, secrets);
      expect(env).not.toHaveProperty('LEDGER_PARTITIONS');
      const worker = core.find(
        (o) => o.kind === 'StatefulSet' && o.metadata.name === 'delivery-worker',
      )!;
      expect(
        containerEnv(worker.spec.template.spec.containers[0], core, secrets),
      ).not.toHaveProperty('LEDGER_PARTITIONS');
    },
  );

  it("core overlay: the reseal of webhook signing secrets runs only on demand, as webhook-matcher's reseal command with its configuration", async () => {
    const cron = core.find(
      (o) => o.kind === 'CronJob' && o.metadata.name === 'meridian-reseal-webhook-secrets',
    )!;
    expect(cron.spec.suspend).toBe(true);
    expect(cron.spec.jobTemplate.spec.backoffLimit).toBe(0);
    const container = podSpecOf(cron).containers[0];
    expect(container.args).toEqual(['reseal']);
    const env = containerEnv(container, core, secrets);
    expect(env.APP).toBe('webhook-matcher');
    const matcher = core.find(
      (o) => o.kind === 'StatefulSet' && o.metadata.name === 'webhook-matcher',
    )!;
    const served = containerEnv(matcher.spec.template.spec.containers[0], core, secrets);
    // The same key ring, database and NATS as the pods whose secrets it re-seals.
    for (const name of ['DATABASE_URL', 'WEBHOOK_SECRETS_KEY', 'NATS_URL', 'NATS_PREFIX'])
      expect({ name, value: env[name] }).toEqual({ name, value: served[name] });
    // The command reads the app's schema with no HTTP server (HTTP_PORT defaults there).
    expectEnvAccepted(await loadConfig('webhook-matcher'), { ...env, HTTP_PORT: '0' }, 'reseal');
    expect(readFileSync(join(__dirname, 'docker', 'entrypoint.sh'), 'utf8')).toContain(
      'apps/webhook-matcher/src/reseal.ts',
    );
  });

  it("core overlay: the reseal of the dashboard's API keys runs only on demand, as the dashboard's reseal command with its configuration", async () => {
    const cron = core.find(
      (o) => o.kind === 'CronJob' && o.metadata.name === 'meridian-reseal-dashboard-secrets',
    )!;
    expect(cron.spec.suspend).toBe(true);
    expect(cron.spec.jobTemplate.spec.backoffLimit).toBe(0);
    const container = podSpecOf(cron).containers[0];
    expect(container.args).toEqual(['reseal']);
    const env = containerEnv(container, core, secrets);
    expect(env.APP).toBe('dashboard');
    const dashboard = core.find((o) => o.kind === 'Deployment' && o.metadata.name === 'dashboard')!;
    const served = containerEnv(dashboard.spec.template.spec.containers[0], core, secrets);
    // The same key ring and database as the pods whose API keys it re-seals.
    for (const name of ['DATABASE_URL', 'DASHBOARD_SECRETS_KEY', 'DASHBOARD_SECRETS_PREVIOUS_KEYS'])
      expect({ name, value: env[name] }).toEqual({ name, value: served[name] });
    expect(env.DASHBOARD_SECRETS_KEY).toBeDefined();
    // The command reads the app's schema with no HTTP server (HTTP_PORT defaults there).
    expectEnvAccepted(await loadConfig('dashboard'), { ...env, HTTP_PORT: '0' }, 'reseal');
    expect(readFileSync(join(__dirname, 'docker', 'entrypoint.sh'), 'utf8')).toContain(
      'apps/dashboard/src/reseal.ts',
    );
  });

  it('core overlay: the migration Job migrates every app that owns a schema, each with its own DATABASE_URL', () => {
    const job = core.find((o) => o.kind === 'Job' && o.metadata.name === 'meridian-migrate')!;
    const all = [...job.spec.template.spec.initContainers, ...job.spec.template.spec.containers];
    const steps = all.filter((c: Obj) => c.args[0] === 'migrate');
    const owners = APPS.filter((app) => existsSync(join(root, 'apps', app, 'src', 'migrate.ts')));
    expect(steps.map((c: Obj) => c.args[1]).sort()).toEqual([...owners].sort());
    expect(steps.map((c: Obj) => c.args[1])).toEqual([...owners].sort(byMigrationOrder));
    for (const step of steps) {
      expect(step.args[0]).toBe('migrate');
      const env = containerEnv(step, core, secrets);
      expect(env.DATABASE_URL).toMatch(/^postgres(ql)?:\/\//);
      expect(step.envFrom).toEqual([{ secretRef: { name: `${step.args[1]}-secrets` } }]);
    }
  });

  it('core overlay: webhook-matcher accepts webhooks on the networks chain-indexer follows (one list), each with upstreams', () => {
    const envOf = (name: string) =>
      containerEnv(
        core.find(
          (o) => (o.kind === 'Deployment' || o.kind === 'StatefulSet') && o.metadata.name === name,
        )!.spec.template.spec.containers[0],
        core,
        secrets,
      );
    const indexer = envOf('chain-indexer');
    const matcher = envOf('webhook-matcher');
    const networks = indexer.NETWORKS!.split(',');
    expect(networks.length).toBeGreaterThan(0);
    expect(matcher.NETWORKS).toBe(indexer.NETWORKS);
    expect(Object.keys(JSON.parse(indexer.UPSTREAMS!))).toEqual(expect.arrayContaining(networks));
  });

  it('core overlay: the dashboard calls the three REST APIs through their Services, by invitation only, with an operator', () => {
    const dashboard = core.find((o) => o.kind === 'Deployment' && o.metadata.name === 'dashboard')!;
    const env = containerEnv(dashboard.spec.template.spec.containers[0], core, secrets);
    const services = core.filter((o) => o.kind === 'Service');
    for (const [variable, app, path] of [
      ['BILLING_API_URL', 'billing-ledger', '/api/v1'],
      ['WEBHOOKS_API_URL', 'webhook-matcher', '/api/v1'],
      ['AUDIT_API_URL', 'audit-api', '/v1'],
    ] as const) {
      const url = new URL(env[variable]!);
      const service = services.find((s) => s.metadata.name === url.hostname);
      expect({ variable, service: service?.spec.selector }).toEqual({
        variable,
        service: { 'app.kubernetes.io/name': app },
      });
      expect(service!.spec.ports.map((p: Obj) => String(p.port))).toContain(url.port);
      expect(url.pathname).toBe(path);
    }
    expect(env.SIGNUP_MODE).toBe('invite');
    expect(env.OPERATOR_EMAIL).toBeDefined();
    expect(env.OPERATOR_PASSWORD).toBeDefined();
    expect(env).not.toHaveProperty('COOKIE_SECURE'); // default true: served over HTTPS
    // One operator token: what billing-ledger checks is what the dashboard sends.
    const billing = core.find(
      (o) => o.kind === 'StatefulSet' && o.metadata.name === 'billing-ledger',
    )!;
    expect(env.OPERATOR_TOKEN).toBe(
      containerEnv(billing.spec.template.spec.containers[0], core, secrets).OPERATOR_TOKEN,
    );
  });

  it('core overlay: chain-indexer runs 2 replicas side by side (the per-network lease of ADR 0411), rolled and disrupted one at a time', () => {
    const indexer = core.find(
      (o) => o.kind === 'Deployment' && o.metadata.name === 'chain-indexer',
    )!;
    expect(indexer.spec.replicas).toBe(2);
    expect(indexer.spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
    });
    // Replicas tell themselves apart in the lease by host:pid unless REPLICA_ID is set: a fixed
    // REPLICA_ID shared by both pods would make them one holder.
    const env = containerEnv(indexer.spec.template.spec.containers[0], core, secrets);
    expect(env).not.toHaveProperty('REPLICA_ID');
    const pdb = core.find(
      (o) => o.kind === 'PodDisruptionBudget' && o.metadata.name === 'chain-indexer',
    )!;
    expect(pdb.spec).toEqual({
      minAvailable: 1,
      selector: { matchLabels: { 'app.kubernetes.io/name': 'chain-indexer' } },
    });
  });

  /** Apps serving client HTTP behind a Service (chain-indexer and delivery-worker serve probes and metrics only). */
  const SERVING = ['billing-ledger', 'webhook-matcher', 'audit-api', 'dashboard'] as const;
  /** What each app's own stop may take after SIGTERM: answering in-flight work, draining, flushing. */
  const APP_STOP_SECONDS = 30;

  it.each([
    ...SERVING.map((app) => ['core', app] as const),
    ...REGIONS.map((region) => [region, `rpc-gateway-${region}`] as const),
  ])(
    'overlay %s: %s keeps serving while its endpoint removal spreads (preStop sleep), and its grace period covers the sleep and its own stop',
    (overlay, name) => {
      const objects = overlay === 'core' ? core : render(join(__dirname, 'overlays', overlay));
      const workload = objects.find(
        (o) => (o.kind === 'Deployment' || o.kind === 'StatefulSet') && o.metadata.name === name,
      )!;
      expect(workload).toBeDefined();
      const pod = workload.spec.template.spec;
      const command = pod.containers[0].lifecycle?.preStop?.exec?.command as string[] | undefined;
      expect(command?.[0]).toBe('sleep');
      const sleep = Number(command![1]);
      expect(sleep).toBeGreaterThanOrEqual(5);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(sleep + APP_STOP_SECONDS);
    },
  );

  it("core overlay: the migration Job loads audit-api's label packs last, after audit-api's migration", () => {
    const job = core.find((o) => o.kind === 'Job' && o.metadata.name === 'meridian-migrate')!;
    const all = [...job.spec.template.spec.initContainers, ...job.spec.template.spec.containers];
    const names = all.map((c: Obj) => c.name as string);
    // Init containers run in order and the main container after all of them.
    expect(job.spec.template.spec.containers.map((c: Obj) => c.name)).toEqual([
      'load-audit-api-labels',
    ]);
    expect(names.indexOf('load-audit-api-labels')).toBeGreaterThan(
      names.indexOf('migrate-audit-api'),
    );
    const load = all.find((c: Obj) => c.name === 'load-audit-api-labels')!;
    expect(load.args).toEqual(['load-labels']);
    expect(load.envFrom).toEqual([{ secretRef: { name: 'audit-api-secrets' } }]);
    expect(containerEnv(load, core, secrets).DATABASE_URL).toMatch(/^postgres(ql)?:\/\//);
  });

  it.each(REGIONS)(
    'region overlay %s: rpc-gateway gets its REGION and a valid config',
    async (region) => {
      const config = await loadConfig('rpc-gateway');
      const objects = render(join(__dirname, 'overlays', region));
      const deployments = objects.filter((o) => o.kind === 'Deployment');
      expect(deployments.map((d) => d.metadata.name)).toEqual([`rpc-gateway-${region}`]);
      const container = deployments[0]!.spec.template.spec.containers[0];
      const env = containerEnv(container, objects, secrets);
      expect(env.REGION).toBe(region);
      expectEnvAccepted(config, env, `overlays/${region} rpc-gateway`);
      const grpc = (container.ports as Obj[]).some((p) => p.name === 'grpc');
      expect(grpc).toBe(region !== 'shared');
      expect(env.GRPC_ENABLED ?? 'true').toBe(region === 'shared' ? 'false' : 'true');
      if (region !== 'shared')
        expect(Object.keys(JSON.parse(env.UPSTREAMS!)).length).toBeGreaterThan(0);
    },
  );

  // L11: a Redis with a password carries it in RATE_LIMIT_REDIS_URL, so the URL is a key of the
  // gateway's Secret (as NATS_URL with credentials is), never of its ConfigMap.
  it.each(REGIONS)(
    'region overlay %s: RATE_LIMIT_REDIS_URL comes from rpc-gateway-secrets, no ConfigMap',
    (region) => {
      const objects = render(join(__dirname, 'overlays', region));
      const configMaps = objects.filter((o) => o.kind === 'ConfigMap');
      expect(configMaps.filter((cm) => 'RATE_LIMIT_REDIS_URL' in (cm.data ?? {}))).toEqual([]);
      const secret = secrets.find((o) => o.metadata.name === 'rpc-gateway-secrets')!;
      const url = Buffer.from(secret.data.RATE_LIMIT_REDIS_URL, 'base64').toString('utf8');
      expect(url).toMatch(/^rediss?:\/\//);
      const container = objects.find((o) => o.kind === 'Deployment')!.spec.template.spec
        .containers[0];
      expect(containerEnv(container, objects, secrets).RATE_LIMIT_REDIS_URL).toBe(url);
    },
  );

  it.each(['core', ...REGIONS])('%s overlay: no ConfigMap value is a URL with a password', (o) => {
    const withPassword = /[a-z][a-z0-9+.-]*:\/\/[^/\s@]*:[^/\s@]+@/i;
    const found = render(join(__dirname, 'overlays', o))
      .filter((object) => object.kind === 'ConfigMap')
      .flatMap((cm) =>
        Object.entries<string>(cm.data ?? {})
          .filter(([, value]) => withPassword.test(value))
          .map(([key]) => `${cm.metadata.name}.${key}`),
      );
    expect(found).toEqual([]);
  });

  // README "Secrets": every key of an app's Secret is required unless marked optional, so the
  // Secret is too: a missing one holds the pod in CreateContainerConfigError naming it, not a
  // gateway that stops on FILTER_ID_KEY (QA: rpc-gateway's was `optional: true`).
  it.each(['core', ...REGIONS])(
    "%s overlay: every app's own Secret is referenced as required",
    (overlay) => {
      const objects = render(join(__dirname, 'overlays', overlay));
      const refs = objects
        .filter((o) => ['Deployment', 'StatefulSet', 'Job', 'CronJob'].includes(o.kind))
        .flatMap((o) =>
          [...(podSpecOf(o).initContainers ?? []), ...podSpecOf(o).containers].flatMap(
            (c: Obj) => (c.envFrom ?? []) as Obj[],
          ),
        )
        .map((source) => source.secretRef)
        .filter((ref) => ref && APPS.some((app) => ref.name === `${app}-secrets`));
      expect(refs.length).toBeGreaterThan(0);
      expect(refs.filter((ref) => ref.optional)).toEqual([]);
    },
  );

  it('docker-compose.yml: every app service environment passes its config schema', async () => {
    const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), {
      merge: true,
    }) as Obj;
    const services = compose.services as Record<string, Obj>;
    const seen = new Set<string>();
    for (const [name, service] of Object.entries(services)) {
      const app = service.environment?.APP as string | undefined;
      if (!app) continue;
      seen.add(app);
      const env = Object.fromEntries(
        Object.entries<string>(service.environment).map(([k, v]) => [
          k,
          String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1'),
        ]),
      );
      expectEnvAccepted(await loadConfig(app), env, `compose ${name}`);
    }
    expect([...seen].sort()).toEqual([...APPS].sort());
    const gateways = Object.values(services).filter((s) => s.environment?.APP === 'rpc-gateway');
    expect(gateways.map((s) => s.environment.REGION).sort()).toEqual([...REGIONS].sort());
    expect(services.migrate!.command).toEqual([
      'migrate',
      ...APPS.filter((a) => a !== 'rpc-gateway').sort(byMigrationOrder),
    ]);
    // webhook-matcher accepts webhooks on the networks chain-indexer follows, nothing else.
    const networksOf = (name: string) => String(services[name]!.environment.NETWORKS);
    expect(networksOf('chain-indexer').split(',').length).toBeGreaterThan(0);
    expect(networksOf('webhook-matcher')).toBe(networksOf('chain-indexer'));
    // audit-api's label packs: loaded after the migrations, before audit-api starts.
    expect(services.labels!.command).toEqual(['load-labels']);
    expect(services.labels!.depends_on.migrate).toEqual({
      condition: 'service_completed_successfully',
    });
    expect(services['audit-api']!.depends_on.labels).toEqual({
      condition: 'service_completed_successfully',
    });
  });

  it('docker-compose.yml: with nothing exported every gateway has a node for a network it offers (else never healthy)', async () => {
    const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), {
      merge: true,
    }) as Obj;
    const services = compose.services as Record<string, Obj>;
    const { configSchema } = await loadConfig('rpc-gateway');
    const { offeredUpstreams } = (await import(
      join(root, 'apps/rpc-gateway/src/upstreams/pools-from-config.ts')
    )) as {
      offeredUpstreams(config: unknown): [string, unknown[]][];
    };
    const served: Record<string, string[]> = {};
    for (const [name, service] of Object.entries(services)) {
      if (service.environment?.APP !== 'rpc-gateway') continue;
      const env = Object.fromEntries(
        Object.entries<string>(service.environment).map(([k, v]) => [
          k,
          String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1'),
        ]),
      );
      const parsed = configSchema.safeParse(env) as { data?: unknown };
      served[name] = offeredUpstreams(parsed.data)
        .filter(([, nodes]) => nodes.length > 0)
        .map(([network]) => network);
      // What it relays to is a service of the file, which it waits for.
      for (const url of String(env['SUI_UPSTREAM_URLS'] ?? '')
        .split(',')
        .filter(Boolean)) {
        const host = new URL(url).hostname;
        expect({ name, host, known: host in services }).toEqual({ name, host, known: true });
        expect(service.depends_on[host]).toEqual({ condition: 'service_healthy' });
      }
    }
    expect(served['rpc-gateway-shared']).toEqual(['sui-mainnet']);
    for (const [name, networks] of Object.entries(served))
      expect({ name, serves: networks.length > 0 }).toEqual({ name, serves: true });
    // The fake runs from the image: its script is in the build context.
    const fake = services['fake-sui-upstream']!;
    const script = (fake.command as string[]).find((arg) => arg.endsWith('.ts'))!;
    expect(existsSync(join(root, script))).toBe(true);
    const rules = readFileSync(join(root, '.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    expect(dockerIgnored(script, rules)).toBe(false);
  });
});

/** The order the migration Job uses, so compose and Kubernetes migrate alike. */
function byMigrationOrder(a: string, b: string): number {
  const order = [
    'billing-ledger',
    'chain-indexer',
    'webhook-matcher',
    'delivery-worker',
    'audit-api',
    'dashboard',
  ];
  return order.indexOf(a) - order.indexOf(b);
}

// ---------------------------------------------------------------------------------------------
// The image: what its commands read is in the build context (.dockerignore), and the entrypoint
// runs it.

/**
 * Docker's .dockerignore rules: patterns relative to the context root (Go filepath.Match plus
 * `**`), a path excluded when it or a parent matches, later `!` patterns re-including.
 */
function dockerIgnored(path: string, rules: string[]): boolean {
  const toRegExp = (pattern: string) =>
    new RegExp(
      `^${pattern
        .replace(/^\/+|\/+$/g, '')
        .split('**')
        .map((part) =>
          part
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '[^/]*')
            .replace(/\?/g, '[^/]'),
        )
        .join('.*')}$`,
    );
  const prefixes = path.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const rule of rules) {
    const negated = rule.startsWith('!');
    const re = toRegExp(negated ? rule.slice(1) : rule);
    if (prefixes.some((prefix) => re.test(prefix))) ignored = !negated;
  }
  return ignored;
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(`${dir}/${entry.name}`) : [`${dir}/${entry.name}`],
  );
}

describe('deploy: the image', () => {
  const rules = readFileSync(join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const entrypoint = readFileSync(join(__dirname, 'docker', 'entrypoint.sh'), 'utf8');

  it("runs on a Node LTS line, pinned by tag, that meets every installed package's engines", () => {
    const from = /^FROM (\S+)/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'))![1]!;
    // node:<major>[.<minor>[.<patch>]]-<debian>-slim: not latest/lts/current, which move.
    const tag = /^node:(\d+)(\.\d+){0,2}-[a-z]+-slim$/.exec(from);
    expect({ from, pinned: Boolean(tag) }).toEqual({ from, pinned: true });
    const major = Number(tag![1]);
    expect({ major, lts: major % 2 === 0 }).toEqual({ major, lts: true });
    // npm's EBADENGINE check, on the first release of that line.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const semver = require('semver') as { satisfies(version: string, range: string): boolean };
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string; engines?: { node?: string } }>;
    };
    const refused = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.engines?.node)
      .filter(([, p]) => !semver.satisfies(`${major}.0.0`, p.engines!.node!))
      .map(([path, p]) => `${path.split('node_modules/').pop()}@${p.version}: ${p.engines!.node}`);
    expect(refused).toEqual([]);
  });

  it('the matcher reads .dockerignore as Docker does', () => {
    expect(dockerIgnored('dist/apps/x.js', rules)).toBe(true);
    expect(dockerIgnored('apps/x/node_modules/y.js', rules)).toBe(true);
    expect(dockerIgnored('deploy/base/core/kustomization.yaml', rules)).toBe(true);
    expect(dockerIgnored('deploy/docker/entrypoint.sh', rules)).toBe(false);
    expect(dockerIgnored('apps/audit-api/src/main.ts', rules)).toBe(false);
  });

  it("builds the dashboard's page where the dashboard serves it from", () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    const build = /^RUN node node_modules\/vite\/bin\/vite\.js build --config (\S+)/m.exec(
      dockerfile,
    );
    expect(build?.[1]).toBe('apps/dashboard/web/vite.config.mts');
    // After the sources are copied in.
    expect(dockerfile.indexOf('COPY . .')).toBeLessThan(build!.index);
    expect(filesUnder('apps/dashboard/web').filter((f) => dockerIgnored(f, rules))).toEqual([]);
    // vite's outDir is the dashboard's DEFAULT_WEB_DIST, and the deployment does not move it.
    const vite = readFileSync(join(root, 'apps/dashboard/web/vite.config.mts'), 'utf8');
    expect(vite).toContain("'../../../dist/apps/dashboard-web'");
    const main = readFileSync(join(root, 'apps/dashboard/src/main.ts'), 'utf8');
    expect(main).toContain("'../../../dist/apps/dashboard-web'");
    expect(dockerfile).toContain('test -f dist/apps/dashboard-web/index.html');
  });

  it("holds every label pack file audit-api's loader reads, and the entrypoint runs the loader", () => {
    const files = filesUnder('data/labels').filter((f) => !f.endsWith('.md'));
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((f) => dockerIgnored(f, rules))).toEqual([]);
    const loader = 'apps/audit-api/src/labels/load-labels.ts';
    expect(existsSync(join(root, loader))).toBe(true);
    // The entrypoint's `load-labels` command runs that loader.
    const command = /^\s*load-labels\)\n(?:\s*#.*\n)*\s*exec node -r @swc-node\/register (\S+)/m;
    expect(command.exec(entrypoint)?.[1]).toBe(loader);
  });
});

// ---------------------------------------------------------------------------------------------
// NetworkPolicies: who may connect to whom (ADR 0506).

type Labels = Record<string, string>;
interface Selector {
  matchLabels?: Labels;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

function selects(selector: Selector | undefined, labels: Labels): boolean {
  if (!selector) return false;
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every(({ key, operator, values }) => {
    switch (operator) {
      case 'In':
        return key in labels && values!.includes(labels[key]!);
      case 'NotIn':
        return !(key in labels) || !values!.includes(labels[key]!);
      case 'Exists':
        return key in labels;
      case 'DoesNotExist':
        return !(key in labels);
      default:
        throw new Error(`unknown operator ${operator}`);
    }
  });
  return byLabel && byExpression;
}

/** Where a connection comes from: a pod of the namespace, or any pod of another namespace. */
interface Source {
  name: string;
  namespace: string;
  namespaceLabels: Labels;
  podLabels: Labels;
}
/** A pod of meridian and its named container ports. */
interface Target {
  name: string;
  labels: Labels;
  ports: Array<{ name: string; containerPort: number }>;
}

/** Whether Kubernetes admits a TCP connection from `source` to `port` (a name) of `target`. */
function admitted(policies: Obj[], source: Source, target: Target, port: string): boolean {
  const number = target.ports.find((p) => p.name === port)!.containerPort;
  const selecting = policies.filter(
    (p) =>
      (p.spec.policyTypes ?? ['Ingress']).includes('Ingress') &&
      selects(p.spec.podSelector, target.labels),
  );
  if (selecting.length === 0) return true;
  const peerMatches = (peer: Obj) => {
    if (peer.ipBlock) return false;
    const nsOk = peer.namespaceSelector
      ? selects(peer.namespaceSelector, source.namespaceLabels)
      : source.namespace === 'meridian';
    const podOk = peer.podSelector ? selects(peer.podSelector, source.podLabels) : true;
    return nsOk && podOk;
  };
  const portMatches = (p: Obj) =>
    (p.protocol ?? 'TCP') === 'TCP' && (p.port === port || p.port === number);
  return selecting.some((policy) =>
    (policy.spec.ingress ?? []).some(
      (rule: Obj) =>
        (!rule.ports?.length || rule.ports.some(portMatches)) &&
        (!rule.from?.length || rule.from.some(peerMatches)),
    ),
  );
}

describe('deploy: NetworkPolicies', () => {
  const namespace = render(join(__dirname, 'overlays', 'namespace'));
  const core = render(join(__dirname, 'overlays', 'core'));
  const regions = Object.fromEntries(
    REGIONS.map((region) => [region, render(join(__dirname, 'overlays', region))]),
  );
  const policiesOf = (objects: Obj[]) => objects.filter((o) => o.kind === 'NetworkPolicy');
  // What a cluster with the namespace, the core and the eu and shared regions has applied.
  const policies = policiesOf([namespace, core, regions['eu']!, regions['shared']!].flat());
  const workloads = [core, regions['eu']!, regions['shared']!]
    .flat()
    .filter((o) => ['Deployment', 'StatefulSet', 'Job'].includes(o.kind));
  const meridianNs = { 'kubernetes.io/metadata.name': 'meridian' };
  const sources: Source[] = [
    ...workloads.map((w) => ({
      name: w.metadata.name as string,
      namespace: 'meridian',
      namespaceLabels: meridianNs,
      podLabels: w.spec.template.metadata.labels as Labels,
    })),
    ...[
      ['ingress', { 'meridian.dev/ingress': 'true' }],
      ['monitoring', { 'meridian.dev/monitoring': 'true' }],
      ['operator', { 'meridian.dev/operator': 'true' }],
      ['other-namespace', {}],
    ].map(([name, labels]) => ({
      name: `ns:${name as string}`,
      namespace: name as string,
      namespaceLabels: labels as Labels,
      // A pod there that happens to look like one of ours is still not one of ours.
      podLabels: { 'app.kubernetes.io/name': 'rpc-gateway' },
    })),
  ];
  const targets: Target[] = workloads
    .filter((w) => w.kind !== 'Job')
    .map((w) => ({
      name: w.metadata.name,
      labels: w.spec.template.metadata.labels,
      ports: w.spec.template.spec.containers[0].ports ?? [],
    }));

  it("the namespace overlay holds the namespace-wide policies, a default deny of ingress among them; core the core apps' own; each region its gateways' own", () => {
    const names = (objects: Obj[]) => policiesOf(objects).map((p) => p.metadata.name as string);
    expect(names(namespace).sort()).toEqual(['allow-prometheus-scrape', 'default-deny-ingress']);
    const deny = policies.find((p) => p.metadata.name === 'default-deny-ingress')!;
    expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress'] });
    for (const policy of policies) expect(policy.metadata.namespace).toBe('meridian');
    expect(names(core).length).toBeGreaterThan(1);
    expect(names(core)).not.toContain('default-deny-ingress');
    for (const region of REGIONS) {
      const own = policiesOf(regions[region]!);
      expect(own.map((p) => p.metadata.name)).toEqual([`rpc-gateway-${region}`]);
      // It selects that region's gateways only: another region's patch never reaches them.
      expect(own[0]!.spec.podSelector.matchLabels).toMatchObject({
        'app.kubernetes.io/name': 'rpc-gateway',
        'meridian.dev/region': region,
      });
    }
  });

  it('allow exactly the flows of the architecture, nothing else', () => {
    const allowed: string[] = [];
    for (const target of targets)
      for (const { name: port } of target.ports)
        for (const source of sources)
          if (admitted(policies, source, target, port))
            allowed.push(`${source.name} -> ${target.name}:${port}`);
    const apps = ['billing-ledger', 'webhook-matcher', 'audit-api', 'dashboard'];
    const gateways = ['rpc-gateway-eu', 'rpc-gateway-shared'];
    const expected = [
      // billing.v1: the credential lookups of the gateways, the matcher and audit-api.
      ...['rpc-gateway-eu', 'rpc-gateway-shared', 'webhook-matcher', 'audit-api'].map(
        (s) => `${s} -> billing-ledger:grpc`,
      ),
      // Public ports through the Ingress controller.
      ...apps.map((t) => `ns:ingress -> ${t}:http`),
      ...gateways.map((t) => `ns:ingress -> ${t}:http`),
      'ns:ingress -> rpc-gateway-eu:grpc',
      // The dashboard calls the three REST APIs; the payment integration the operator API.
      ...['billing-ledger', 'webhook-matcher', 'audit-api'].map((t) => `dashboard -> ${t}:http`),
      'ns:operator -> billing-ledger:http',
      // audit-api's chain reads through a gateway.
      ...gateways.map((t) => `audit-api -> ${t}:http`),
      // Prometheus scrapes /metrics of every app, on its http port.
      ...targets.map((t) => `ns:monitoring -> ${t.name}:http`),
    ];
    expect(allowed.sort()).toEqual([...new Set(expected)].sort());
  });

  it('the flow evaluator bites: without the policies everything is open', () => {
    const target = targets.find((t) => t.name === 'billing-ledger')!;
    const stranger = sources.find((s) => s.name === 'ns:other-namespace')!;
    expect(admitted([], stranger, target, 'grpc')).toBe(true);
    expect(admitted(policies, stranger, target, 'grpc')).toBe(false);
  });

  it('leave egress open (Postgres, NATS, Redis, nodes and webhook targets are outside them)', () => {
    for (const policy of policies) expect(policy.spec.policyTypes).toEqual(['Ingress']);
  });
});

// ---------------------------------------------------------------------------------------------
// Transport security components (optional): the TLS files the apps are told are where the
// Secrets are mounted, and the apps accept them.

describe('deploy: the grpc-tls and nats-tls components', () => {
  let tmp: string;
  let pki: TestPki;
  /** An overlay with both components on top of `overlay`. */
  const withComponents = (overlay: string) => {
    const dir = join(tmp, `tls-${overlay}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      [
        'resources:',
        `  - ${relative(dir, join(__dirname, 'overlays', overlay))}`,
        'components:',
        `  - ${relative(dir, join(__dirname, 'components', 'grpc-tls'))}`,
        `  - ${relative(dir, join(__dirname, 'components', 'nats-tls'))}`,
      ].join('\n'),
    );
    return dir;
  };
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'meridian-deploy-tls-'));
    pki = new TestPki();
  });
  afterAll(() => {
    rmSync(tmp, { recursive: true, force: true });
    pki.remove();
  });

  it('render and validate on the core overlay and a region', async () => {
    const { status, out } = await runValidator(
      '--kustomize',
      withComponents('core'),
      '--kustomize',
      withComponents('eu'),
    );
    expect(out).toMatch(/^2 passed, 0 failed$/m);
    expect(status).toBe(0);
  });

  it('give every NATS user the CA, billing-ledger and its clients their certificates, in mounted Secrets the apps accept', async () => {
    const ca = await pki.ca('meridian internal CA');
    const secrets = render(join(__dirname, 'secrets', 'example')).filter(
      (o) => o.kind === 'Secret',
    );
    const objects = [
      ...render(withComponents('core')),
      ...render(withComponents('eu')).filter((o) => o.kind !== 'Namespace'),
    ];
    const told: Record<string, string[]> = {};
    for (const workload of objects.filter((o) =>
      ['Deployment', 'StatefulSet', 'Job', 'CronJob'].includes(o.kind),
    )) {
      const pod = podSpecOf(workload);
      const container = pod.containers[0];
      const env = containerEnv(container, objects, secrets);
      const files = Object.keys(env).filter((k) => /^(GRPC|NATS)_TLS_.*_FILE$/.test(k));
      if (files.length === 0) continue;
      told[workload.metadata.name] = files.sort();
      // Each file is a key of a Secret mounted read-only where the variable points.
      for (const variable of files) {
        const path = env[variable]!;
        const mount = (container.volumeMounts as Obj[]).find((m) =>
          path.startsWith(`${m.mountPath}/`),
        )!;
        expect({ variable, readOnly: mount?.readOnly }).toEqual({ variable, readOnly: true });
        const volume = (pod.volumes as Obj[]).find((v) => v.name === mount.name)!;
        expect(volume.secret?.secretName).toMatch(/-tls$/);
        expect(['ca.crt', 'tls.crt', 'tls.key']).toContain(path.slice(mount.mountPath.length + 1));
      }
      if (workload.kind === 'Job' || workload.kind === 'CronJob') continue;
      // The app's own schema takes the settings, with the Secrets' files in place.
      const app = workload.metadata.name.replace(/-eu$/, '');
      const config = await loadConfig(app);
      const id = await ca.issue(app, [app, `${app}.meridian.svc.cluster.local`]);
      const local = { 'ca.crt': ca.certFile, 'tls.crt': id.certFile, 'tls.key': id.keyFile };
      for (const variable of files)
        env[variable] = local[env[variable]!.split('/').pop() as keyof typeof local];
      expectEnvAccepted(config, env, `tls components: ${app}`);
      const parsed = config.configSchema.safeParse(env) as { data?: object };
      expect({ app, problem: transportSettingsProblem(parsed.data!) }).toEqual({
        app,
        problem: undefined,
      });
    }
    const grpc = ['GRPC_TLS_CA_FILE', 'GRPC_TLS_CERT_FILE', 'GRPC_TLS_KEY_FILE'];
    expect(told).toEqual({
      'billing-ledger': [...grpc, 'NATS_TLS_CA_FILE'].sort(),
      'webhook-matcher': [...grpc, 'NATS_TLS_CA_FILE'].sort(),
      'audit-api': [...grpc, 'NATS_TLS_CA_FILE'].sort(),
      'rpc-gateway-eu': [...grpc, 'NATS_TLS_CA_FILE'].sort(),
      'chain-indexer': ['NATS_TLS_CA_FILE'],
      'delivery-worker': ['NATS_TLS_CA_FILE'],
      'meridian-provision-streams': ['NATS_TLS_CA_FILE'],
      'meridian-reseal-webhook-secrets': ['NATS_TLS_CA_FILE'],
    });
    const ledger = objects.find(
      (o) => o.metadata.name === 'billing-ledger' && o.kind === 'StatefulSet',
    )!;
    expect(
      containerEnv(ledger.spec.template.spec.containers[0], objects, secrets)[
        'GRPC_TLS_CLIENT_AUTH'
      ],
    ).toBe('require');
  });
});
