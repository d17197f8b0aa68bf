import { existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENDPOINTS, REGIONS } from '@meridian/networks';
import type { AppProcess } from './layout';

/** The operator the dashboard makes at its first start (its password: tools/stack/secrets.ts). */
export function dashboardOperatorEmail(env: NodeJS.ProcessEnv = process.env): string {
  return env['DASHBOARD_OPERATOR_EMAIL'] ?? 'operator@meridian.example';
}

const WEB_DIR = 'apps/dashboard/web';
/**
 * What the page bundles of the libraries (vite.config.mts `resolve.alias`: a lib's sources, or
 * the one module of a sub-entry): a change there rebuilds it too.
 */
export const BUNDLED_LIBS = [
  'libs/domain/errors/src',
  'libs/domain/networks/src',
  'libs/domain/plans/src',
  'libs/domain/time/src',
  'libs/domain/webhooks/src/bounds.ts',
  'libs/domain/webhooks/src/secret-rotation.ts',
];
export const WEB_DIST = 'dist/apps/dashboard-web';
/**
 * Written when a build of the page finished (exit code 0), dated when that build started; beside
 * the page, not in it (the dashboard serves that directory). A build that failed may still have
 * written the page (vite empties and writes its outDir before a later step fails), so the page's
 * own files do not say it is whole.
 */
export const WEB_BUILT_STAMP = `${WEB_DIST}.built`;

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/**
 * True when no build of the page finished, the page is missing, or a source file changed after
 * the start of the last build that finished.
 */
export function dashboardBuildNeeded(root: string): boolean {
  const stamp = join(root, WEB_BUILT_STAMP);
  if (!existsSync(stamp) || !existsSync(join(root, WEB_DIST, 'index.html'))) return true;
  const built = statSync(stamp).mtimeMs;
  return [WEB_DIR, ...BUNDLED_LIBS].some((dir) => newestMtime(join(root, dir)) > built);
}

/**
 * Runs a build of the page (`run`: vite, its exit code) so that only one that finished counts:
 * the stamp goes before it starts and is written after exit code 0, dated at the start (a source
 * saved during the build makes the next start build again). Returns the exit code (null: ended
 * by a signal).
 */
export async function buildDashboard(
  root: string,
  run: () => Promise<number | null>,
  now: () => Date = () => new Date(),
): Promise<number | null> {
  const stamp = join(root, WEB_BUILT_STAMP);
  rmSync(stamp, { force: true });
  const started = now();
  const code = await run();
  if (code === 0) {
    writeFileSync(stamp, `${started.toISOString()}\n`);
    utimesSync(stamp, started, started);
  }
  return code;
}

/** Arguments of `vite build` for the page, run with this Node. */
export function viteBuildArgs(root: string): string[] {
  return [
    join(root, 'node_modules/vite/bin/vite.js'),
    'build',
    '--config',
    join(root, WEB_DIR, 'vite.config.mts'),
    '--logLevel',
    'warn',
  ];
}

/**
 * What the dashboard process needs beyond the common env: the APIs it calls and what it shows
 * (its secrets key and the operator's password come from the stack's secrets, secretsEnvOf).
 */
export function dashboardEnv(
  apps: readonly AppProcess[],
  host: string,
  root: string,
  operatorEmail: string,
): Record<string, string> {
  const byName = (name: string) => apps.find((app) => app.name === name)!;
  const http = (name: string) => `http://${host}:${byName(name).httpPort}`;
  return {
    BILLING_API_URL: `${http('billing-ledger')}/api/v1`,
    WEBHOOKS_API_URL: `${http('webhook-matcher')}/api/v1`,
    AUDIT_API_URL: `${http('audit-api')}/v1`,
    OPERATOR_EMAIL: operatorEmail,
    // Plain http on 127.0.0.1: a Secure cookie would never come back.
    COOKIE_SECURE: 'false',
    PUBLIC_RPC_URLS: JSON.stringify(
      Object.fromEntries(
        ENDPOINTS.map((endpoint) => [endpoint, `${http(`rpc-gateway-${endpoint}`)}/`]),
      ),
    ),
    PUBLIC_GRPC_ADDRESSES: JSON.stringify(
      Object.fromEntries(
        REGIONS.map((region) => [region, `${host}:${byName(`rpc-gateway-${region}`).grpcPort}`]),
      ),
    ),
    WEB_DIST_DIR: join(root, WEB_DIST),
  };
}
