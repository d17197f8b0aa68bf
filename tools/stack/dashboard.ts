import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ENDPOINTS, REGIONS } from '@meridian/networks';
import type { AppProcess } from './layout';

/**
 * The dashboard's secrets on the local stack: derived from the stack directory (like the webhook
 * secrets key), so a restart keeps users signed up and the operator's password is stable. Local
 * only: a deployment sets random values.
 */
export interface DashboardSecrets {
  secretsKey: string;
  operatorEmail: string;
  operatorPassword: string;
}

export function dashboardSecrets(
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
): DashboardSecrets {
  const derive = (purpose: string) =>
    createHash('sha256').update(`meridian-local-stack-dashboard-${purpose}:${dir}`).digest();
  return {
    secretsKey: env['DASHBOARD_SECRETS_KEY'] ?? derive('secrets').toString('base64'),
    operatorEmail: env['DASHBOARD_OPERATOR_EMAIL'] ?? 'operator@meridian.example',
    operatorPassword:
      env['DASHBOARD_OPERATOR_PASSWORD'] ?? derive('operator').toString('base64url').slice(0, 20),
  };
}

const WEB_DIR = 'apps/dashboard/web';
export const WEB_DIST = 'dist/apps/dashboard-web';

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/** True when the page was never built or a source file changed after the last build. */
export function dashboardBuildNeeded(root: string): boolean {
  const index = join(root, WEB_DIST, 'index.html');
  return !existsSync(index) || newestMtime(join(root, WEB_DIR)) > statSync(index).mtimeMs;
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

/** What the dashboard process needs beyond the common env: the APIs it calls and what it shows. */
export function dashboardEnv(
  apps: readonly AppProcess[],
  host: string,
  root: string,
  secrets: DashboardSecrets,
): Record<string, string> {
  const byName = (name: string) => apps.find((app) => app.name === name)!;
  const http = (name: string) => `http://${host}:${byName(name).httpPort}`;
  return {
    BILLING_API_URL: `${http('billing-ledger')}/api/v1`,
    WEBHOOKS_API_URL: `${http('webhook-matcher')}/api/v1`,
    AUDIT_API_URL: `${http('audit-api')}/v1`,
    DASHBOARD_SECRETS_KEY: secrets.secretsKey,
    OPERATOR_EMAIL: secrets.operatorEmail,
    OPERATOR_PASSWORD: secrets.operatorPassword,
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
