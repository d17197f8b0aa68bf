import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { BUNDLED_LIBS, buildDashboard, dashboardBuildNeeded, WEB_DIST } from './dashboard';

const root = resolve(__dirname, '../..');
const web = join(root, 'apps/dashboard/web');

describe("the dashboard page's rebuild", () => {
  it('watches every library source the page bundles (vite.config.mts aliases)', () => {
    const targets = [
      ...readFileSync(join(web, 'vite.config.mts'), 'utf8').matchAll(
        /'@meridian\/[^']+':\s*fileURLToPath\(\s*new URL\('([^']+)'/g,
      ),
    ].map(([, target]) => relative(root, resolve(web, target!)));
    expect(targets.length).toBeGreaterThan(0);
    for (const target of targets)
      expect([target, BUNDLED_LIBS.some((lib) => target.startsWith(lib))]).toEqual([target, true]);
  });
});

describe('dashboardBuildNeeded: only a build that finished counts (QA: a failed build was served blank)', () => {
  let tmp: string;
  const at = (iso: string) => new Date(iso);
  /** A checkout whose page sources and bundled libraries were all saved at `iso`. */
  const sourcesAt = (iso: string) => {
    for (const dir of ['apps/dashboard/web/src', ...BUNDLED_LIBS]) {
      const file = dir.endsWith('.ts') ? join(tmp, dir) : join(tmp, dir, 'index.ts');
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, '');
      utimesSync(file, at(iso), at(iso));
      utimesSync(dirname(file), at(iso), at(iso));
    }
    utimesSync(join(tmp, 'apps/dashboard/web'), at(iso), at(iso));
  };
  /** What vite leaves: the page, dated `iso`. */
  const pageAt = (iso: string) => {
    mkdirSync(join(tmp, WEB_DIST), { recursive: true });
    writeFileSync(join(tmp, WEB_DIST, 'index.html'), '<!doctype html>');
    utimesSync(join(tmp, WEB_DIST, 'index.html'), at(iso), at(iso));
  };
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), 'dashboard-build-'));
    sourcesAt('2026-11-30T10:00:00Z');
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it('a page written by a build that failed (newer than every source) is built again', async () => {
    expect(dashboardBuildNeeded(tmp)).toBe(true);
    const code = await buildDashboard(
      tmp,
      async () => {
        pageAt('2026-11-30T11:00:00Z');
        return 1;
      },
      () => at('2026-11-30T11:00:00Z'),
    );
    expect(code).toBe(1);
    expect(dashboardBuildNeeded(tmp)).toBe(true);
  });

  it('a page without a finished build is built again (a checkout of before the stamp included)', () => {
    pageAt('2026-11-30T11:00:00Z');
    expect(dashboardBuildNeeded(tmp)).toBe(true);
  });

  it('a build that finished counts until a source changes; a failed one after it counts no more', async () => {
    const ok = await buildDashboard(
      tmp,
      async () => {
        pageAt('2026-11-30T11:00:05Z');
        return 0;
      },
      () => at('2026-11-30T11:00:00Z'),
    );
    expect(ok).toBe(0);
    expect(dashboardBuildNeeded(tmp)).toBe(false);
    sourcesAt('2026-11-30T12:00:00Z');
    expect(dashboardBuildNeeded(tmp)).toBe(true);
    await buildDashboard(
      tmp,
      async () => 2,
      () => at('2026-11-30T13:00:00Z'),
    );
    expect(dashboardBuildNeeded(tmp)).toBe(true);
  });

  it('a source saved while the build ran makes the next start build again', async () => {
    await buildDashboard(
      tmp,
      async () => {
        sourcesAt('2026-11-30T11:00:02Z');
        pageAt('2026-11-30T11:00:05Z');
        return 0;
      },
      () => at('2026-11-30T11:00:00Z'),
    );
    expect(dashboardBuildNeeded(tmp)).toBe(true);
  });
});
