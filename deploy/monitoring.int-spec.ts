// The alerting rules (deploy/monitoring/alerts.yaml) through Prometheus's own promtool: they
// load, their unit tests pass, and those tests bite; every alert is tested firing and quiet, has
// a severity, a text and a runbook that exists, and is explained in deploy/README.md; the
// Grafana dashboard's queries parse. That the metrics both name are served by the apps is
// checked on the running stack (tools/stack).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

const root = join(__dirname, '..');
const dir = join(__dirname, 'monitoring');

interface AlertRule {
  alert: string;
  expr: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
interface RuleTests {
  tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts?: unknown[] }> }>;
}

const rulesText = readFileSync(join(dir, 'alerts.yaml'), 'utf8');
const rules = (parse(rulesText) as { groups: Array<{ rules: AlertRule[] }> }).groups.flatMap(
  (g) => g.rules,
);
const ruleTests = parse(readFileSync(join(dir, 'alerts.test.yaml'), 'utf8')) as RuleTests;

function promtool(cwd: string, ...args: string[]): { status: number | null; out: string } {
  const result = spawnSync('promtool', args, { cwd, encoding: 'utf8', timeout: 60_000 });
  if (result.error)
    throw new Error(
      `promtool: ${result.error.message} (Debian package prometheus; .ci/run installs it)`,
    );
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

/** A Markdown heading's anchor, as GitHub makes it. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

describe('deploy: alerting rules', () => {
  it('load, and pass their unit tests', () => {
    const check = promtool(dir, 'check', 'rules', 'alerts.yaml');
    expect(check.out).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(check.status).toBe(0);
    const test = promtool(dir, 'test', 'rules', 'alerts.test.yaml');
    expect(test.out).toContain('SUCCESS');
    expect(test.status).toBe(0);
  });

  it('fail their unit tests when a rule is wrong', () => {
    // The same tests against rules with the lag goal moved, the dead-letter rule blind to a
    // durable's first dead letter, the head-lag threshold moved, the failing-scrape rule
    // reading healthy targets and the detachment rule blind to NATS being gone: promtool names
    // each alert.
    const tmp = mkdtempSync(join(tmpdir(), 'meridian-alerts-'));
    try {
      const broken = rulesText
        .replace('[5m]))) > 2', '[5m]))) > 5')
        .replace(/ {10}or\n {10}sum by \(consumer, reason, code\) \(\n[^]*?\) > 0\n/, '')
        .replace(') > 120\n', ') > 900\n')
        .replace('(up == 0)', '(up == 1)')
        .replace('          unless on (instance) (min by (instance) (nats_connected) == 0)\n', '');
      expect(broken).not.toContain('unless messaging_dead_lettered_total');
      expect(broken).not.toContain(') > 120\n');
      expect(broken).not.toContain('(up == 0)');
      expect(broken).not.toContain('unless on (instance)');
      writeFileSync(join(tmp, 'alerts.yaml'), broken);
      copyFileSync(join(dir, 'alerts.test.yaml'), join(tmp, 'alerts.test.yaml'));
      const test = promtool(tmp, 'test', 'rules', 'alerts.test.yaml');
      expect(test.status).toBe(1);
      expect(test.out).toMatch(/alertname: MeridianUsageApplyLagHigh, time: 20m/);
      expect(test.out).toMatch(/alertname: MeridianUsageDeadLettered, time: 22m/);
      expect(test.out).toMatch(/alertname: MeridianChainHeadLagHigh, time: 20m/);
      expect(test.out).toMatch(/alertname: MeridianScrapeFailing, time: 40m/);
      expect(test.out).toMatch(/alertname: MeridianNatsConsumerDetached, time: 25m/);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('test every alert both firing and quiet', () => {
    const firing = new Set<string>();
    const quiet = new Set<string>();
    for (const test of ruleTests.tests)
      for (const c of test.alert_rule_test)
        (c.exp_alerts?.length ? firing : quiet).add(c.alertname);
    const names = rules.map((r) => r.alert).sort();
    expect(new Set(names).size).toBe(names.length);
    expect([...firing].sort()).toEqual(names);
    expect([...quiet].sort()).toEqual(names);
  });

  it('give each alert a severity, a text and a runbook that exists', () => {
    for (const rule of rules) {
      expect({ alert: rule.alert, severity: rule.labels.severity }).toEqual({
        alert: rule.alert,
        severity: expect.stringMatching(/^(critical|warning)$/),
      });
      expect(rule.annotations.summary).toEqual(expect.any(String));
      expect(rule.annotations.description).toEqual(expect.any(String));
      const [file, anchor] = rule.annotations.runbook!.split('#');
      const anchors = readFileSync(join(root, file!), 'utf8')
        .split('\n')
        .filter((line) => /^#{1,6} /.test(line))
        .map((line) => anchorOf(line.replace(/^#+ /, '')));
      expect({ alert: rule.alert, runbook: anchors.includes(anchor!) }).toEqual({
        alert: rule.alert,
        runbook: true,
      });
    }
  });

  it('come with a Grafana dashboard whose every query is PromQL that promtool accepts', () => {
    const dashboard = JSON.parse(readFileSync(join(dir, 'grafana-usage.json'), 'utf8')) as {
      uid: string;
      panels: Array<{ id: number; type: string; targets?: Array<{ expr: string }> }>;
    };
    expect(dashboard.uid).toBe('meridian-usage');
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThanOrEqual(10);
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    // Each query as a recording rule: promtool parses it as Prometheus would.
    const tmp = mkdtempSync(join(tmpdir(), 'meridian-dashboard-'));
    try {
      const recording = exprs.map((expr, i) => ({ record: `dashboard:query_${i}`, expr }));
      writeFileSync(
        join(tmp, 'queries.yaml'),
        JSON.stringify({ groups: [{ name: 'dashboard', rules: recording }] }),
      );
      const check = promtool(tmp, 'check', 'rules', 'queries.yaml');
      expect(check.out).toContain(`SUCCESS: ${exprs.length} rules found`);
      // And a broken query is caught the same way.
      writeFileSync(
        join(tmp, 'broken.yaml'),
        JSON.stringify({
          groups: [{ name: 'd', rules: [{ record: 'd:q', expr: 'sum(rate(x[1m])' }] }],
        }),
      );
      expect(promtool(tmp, 'check', 'rules', 'broken.yaml').status).toBe(1);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('explain every alert in deploy/README.md, "Alerts"', () => {
    const readme = readFileSync(join(__dirname, 'README.md'), 'utf8');
    const section = readme.slice(
      readme.indexOf('### Alerts'),
      readme.indexOf('\n## ', readme.indexOf('### Alerts')),
    );
    const explained = [...section.matchAll(/^- `(\w+)` \(|; `(\w+)` \(/gm)].map(
      (m) => m[1] ?? m[2],
    );
    expect(explained.sort()).toEqual(rules.map((r) => r.alert).sort());
  });
});
