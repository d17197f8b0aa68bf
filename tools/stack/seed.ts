import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NETWORK_KEYS } from '@meridian/networks';
import type { StackLayout } from './layout';

export interface DemoCredentials {
  accountId: string;
  apiKey: string;
  accessTokens: Record<string, string>;
}

const DEMO_FILE = 'demo-account.json';

async function call<T>(
  base: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/**
 * Seeds the demo account through billing-ledger's operator and account APIs: a Starter account
 * (its 30 access tokens cover one per network), an API key with every scope, one access token
 * per network key. What it created is kept in `<stack dir>/demo-account.json` and reused on the
 * next start as long as the key still authenticates and every token is still listed; anything
 * missing (a fresh database, a deleted token) is created again.
 */
export async function seedDemo(
  layout: StackLayout,
  operatorToken: string,
): Promise<DemoCredentials | undefined> {
  const billing = layout.apps.find((app) => app.app === 'billing-ledger');
  if (!billing) return undefined;
  const base = `http://${layout.host}:${billing.httpPort}/api/v1`;
  const file = join(layout.dir, DEMO_FILE);

  let demo: DemoCredentials | undefined = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials)
    : undefined;
  if (demo && (await call(base, 'GET', '/account', demo.apiKey)).status !== 200) demo = undefined;
  if (!demo) {
    const created = await call<{ account: { id: string }; api_key: { key: string } }>(
      base,
      'POST',
      '/admin/accounts',
      operatorToken,
      {
        name: 'demo',
        type: 'individual',
        plan: 'starter',
        api_key_scopes: ['account', 'webhooks', 'audit'],
      },
    );
    if (created.status !== 201)
      throw new Error(
        `seeding the demo account failed: HTTP ${created.status} ${JSON.stringify(created.body)}`,
      );
    demo = {
      accountId: created.body.account.id,
      apiKey: created.body.api_key.key,
      accessTokens: {},
    };
  }

  const listed = await call<{ items: Array<{ id: string; network: string }> }>(
    base,
    'GET',
    '/access-tokens?limit=200',
    demo.apiKey,
  );
  const live = new Set(listed.body.items.map((item) => item.network));
  const tokens: Record<string, string> = {};
  for (const network of NETWORK_KEYS) {
    const known = demo.accessTokens[network];
    if (known && live.has(network)) {
      tokens[network] = known;
      continue;
    }
    const created = await call<{ token: string }>(base, 'POST', '/access-tokens', demo.apiKey, {
      network,
      name: `demo ${network}`,
    });
    if (created.status !== 201)
      throw new Error(
        `demo access token for ${network} failed: HTTP ${created.status} ${JSON.stringify(created.body)}`,
      );
    tokens[network] = created.body.token;
  }
  demo = { ...demo, accessTokens: tokens };
  writeFileSync(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  return demo;
}
