import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { BUNDLED_LIBS } from './dashboard';

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
