import { AUTHORIZATION_MATRIX, type MatrixRow } from './authorization-matrix';
import type { Route } from './fuzz-stack';

export interface MatrixAnswer {
  status: number;
  text: string;
}

export type Send = (
  process: string,
  method: string,
  path: string,
  authorization: string | undefined,
  body: unknown,
) => Promise<MatrixAnswer>;

/** Credentials of the matrix: account A is the victim, account B the other customer. */
export interface MatrixCredentials {
  operatorToken: string;
  /** A's key with every scope, and the ids of A's resources (filled into `:id`). */
  victimKey: string;
  victimIds: Record<'account' | 'api_key' | 'access_token' | 'webhook' | 'address_list', string>;
  /** B's key with every scope. */
  otherKey: string;
  /** B's keys without a scope: `webhooks` only (no account, no audit) and `account` only. */
  otherWebhooksOnlyKey: string;
  otherAccountOnlyKey: string;
}

/** `METHOD /url` of every running route without a row, and of every row without a route. */
export function matrixCoverage(process: string, routes: Route[]): string[] {
  const rows = AUTHORIZATION_MATRIX[process] ?? {};
  const running = new Set(routes.map((route) => `${route.method} ${route.url}`));
  return [
    ...[...running]
      .filter((key) => !(key in rows))
      .map((key) => `${process}: route ${key} has no row in tools/fuzz/authorization-matrix.ts`),
    ...Object.keys(rows)
      .filter((key) => !running.has(key))
      .map((key) => `${process}: row ${key} names no route of the running process`),
  ];
}

/**
 * Every refusal a row implies, as [case, credential, expected status]; a failure message per
 * answer that differs, or that shows any of the victim's ids to someone else.
 */
export async function checkRoute(
  send: Send,
  process: string,
  key: string,
  row: MatrixRow,
  creds: MatrixCredentials,
): Promise<string[]> {
  const [method, template] = key.split(' ') as [string, string];
  const path = (row.id ? template.replace(':id', creds.victimIds[row.id]) : template).replace(
    ':eventId',
    'evt_0000000000000000',
  );
  const problems: string[] = [];
  const expect = async (name: string, authorization: string | undefined, statuses: number[]) => {
    const answer = await send(process, method, path, authorization, row.body);
    if (!statuses.includes(answer.status))
      problems.push(
        `${process} ${key} ${name}: expected ${statuses.join(' or ')}, got ${answer.status} ${answer.text.slice(0, 200)}`,
      );
    for (const id of Object.values(creds.victimIds)) {
      if (answer.text.includes(id))
        problems.push(`${process} ${key} ${name}: the answer shows the other account's id ${id}`);
    }
  };
  if (row.access === 'public') {
    await expect('without credentials', undefined, [200, 503]);
    return problems;
  }
  await expect('without credentials', undefined, [401]);
  await expect('with a malformed header', 'Basic Zm9vOmJhcg==', [401]);
  await expect('with an unknown key', 'Bearer mrd_0123456789abcdef0123456789abcdef', [401]);
  if (row.access === 'operator') {
    await expect("with a customer's key (every scope)", `Bearer ${creds.victimKey}`, [401]);
    return problems;
  }
  await expect('with the operator token', `Bearer ${creds.operatorToken}`, [401]);
  const withoutScope =
    row.access === 'webhooks' ? creds.otherAccountOnlyKey : creds.otherWebhooksOnlyKey;
  await expect('with a key of the wrong scope', `Bearer ${withoutScope}`, [403]);
  if (row.id) {
    await expect("with another account's key", `Bearer ${creds.otherKey}`, [404]);
  } else if (method === 'GET') {
    // Its own data only: the answer must not name any of the victim's ids (checked above).
    await expect("with another account's key", `Bearer ${creds.otherKey}`, [200]);
  }
  return problems;
}
