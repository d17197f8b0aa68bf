import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NETWORK_KEYS } from '@meridian/networks';
import type { StackLayout } from './layout';

export interface DemoCredentials {
  accountId: string;
  apiKey: string;
  accessTokens: Record<string, string>;
}

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

interface AccountSpec {
  name: string;
  plan: string;
  scopes: string[];
  networks: readonly string[];
  /** Where what was created is kept (in the stack dir), so restarts reuse it. */
  file: string;
}

/**
 * Seeds one account through billing-ledger's operator and account APIs: the account on its plan,
 * an API key with the given scopes, one access token per network. What it created is kept in
 * `<stack dir>/<file>` and reused on the next start as long as the key still authenticates and
 * each token is still listed; anything missing (a fresh database, a deleted token) is created again.
 */
async function seedAccount(
  layout: StackLayout,
  operatorToken: string,
  spec: AccountSpec,
): Promise<DemoCredentials> {
  const billing = layout.apps.find((app) => app.app === 'billing-ledger')!;
  const base = `http://${layout.host}:${billing.httpPort}/api/v1`;
  const file = join(layout.dir, spec.file);

  let seeded: DemoCredentials | undefined = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials)
    : undefined;
  if (seeded && (await call(base, 'GET', '/account', seeded.apiKey)).status !== 200)
    seeded = undefined;
  if (!seeded) {
    const created = await call<{ account: { id: string }; api_key: { key: string } }>(
      base,
      'POST',
      '/admin/accounts',
      operatorToken,
      {
        name: spec.name,
        type: 'individual',
        plan: spec.plan,
        api_key_scopes: spec.scopes,
      },
    );
    if (created.status !== 201) {
      throw new Error(
        `seeding account ${spec.name} failed: HTTP ${created.status} ${JSON.stringify(created.body)}`,
      );
    }
    seeded = {
      accountId: created.body.account.id,
      apiKey: created.body.api_key.key,
      accessTokens: {},
    };
  }

  const listed = await call<{ items: Array<{ id: string; network: string }> }>(
    base,
    'GET',
    '/access-tokens?limit=200',
    seeded.apiKey,
  );
  const live = new Set(listed.body.items.map((item) => item.network));
  const tokens: Record<string, string> = {};
  for (const network of spec.networks) {
    const known = seeded.accessTokens[network];
    if (known && live.has(network)) {
      tokens[network] = known;
      continue;
    }
    const created = await call<{ token: string }>(base, 'POST', '/access-tokens', seeded.apiKey, {
      network,
      name: `${spec.name} ${network}`,
    });
    if (created.status !== 201) {
      throw new Error(
        `access token of ${spec.name} for ${network} failed: HTTP ${created.status} ${JSON.stringify(created.body)}`,
      );
    }
    tokens[network] = created.body.token;
  }
  seeded = { ...seeded, accessTokens: tokens };
  writeFileSync(file, `${JSON.stringify(seeded, null, 2)}\n`, { mode: 0o600 });
  return seeded;
}

/** The demo account: Starter (its 30 access tokens cover one per network), a key with every scope. */
export function seedDemo(layout: StackLayout, operatorToken: string): Promise<DemoCredentials> {
  return seedAccount(layout, operatorToken, {
    name: 'demo',
    plan: 'starter',
    scopes: ['account', 'plan', 'webhooks', 'audit'],
    networks: NETWORK_KEYS,
    file: 'demo-account.json',
  });
}

/**
 * audit-api reads chains through the gateway like any client (ARCHITECTURE flow 3), so it needs
 * access tokens of its own: a service account, billed separately from the demo account.
 */
export function seedAuditService(
  layout: StackLayout,
  operatorToken: string,
  networks: readonly string[],
): Promise<DemoCredentials> {
  return seedAccount(layout, operatorToken, {
    name: 'audit-api service',
    plan: 'premium',
    // Only to manage its own access tokens; it has no audit or webhook rights.
    scopes: ['account'],
    networks,
    file: 'audit-service-account.json',
  });
}
