import { AUTHORIZATION_MATRIX, BUILT_ROUTES, type MatrixRow } from './authorization-matrix';
import type { Route } from './fuzz-stack';

export interface MatrixAnswer {
  status: number;
  text: string;
}

/** A dashboard session: the `mrd_session` cookie's value and its CSRF token. */
export interface Session {
  cookie: string;
  csrf: string;
}

/** An Authorization header value, or a dashboard session (sent with or without its CSRF token). */
export type Credential = string | { session: Session; withCsrf: boolean };

export type Send = (
  process: string,
  method: string,
  path: string,
  credential: Credential | undefined,
  body: unknown,
) => Promise<MatrixAnswer>;

/** The request headers a credential stands for. */
export function credentialHeaders(credential: Credential | undefined): Record<string, string> {
  if (credential === undefined) return {};
  if (typeof credential === 'string') return { authorization: credential };
  return {
    cookie: `mrd_session=${credential.session.cookie}`,
    ...(credential.withCsrf ? { 'x-csrf-token': credential.session.csrf } : {}),
  };
}

/** Credentials of the matrix: account A is the victim, account B the other customer. */
export interface MatrixCredentials {
  operatorToken: string;
  /** A's key with every scope, and the ids of A's resources (filled into `:id`). */
  victimKey: string;
  victimIds: Record<NonNullable<MatrixRow['id']>, string>;
  /** B's key with every scope. */
  otherKey: string;
  /** B's keys without a scope: `webhooks` only (no account, no audit) and `account` only. */
  otherWebhooksOnlyKey: string;
  otherAccountOnlyKey: string;
  /**
   * Dashboard sessions: the victim customer (owns the dashboard_* ids), another customer, the
   * operator, and a member of the victim's account.
   */
  sessions: { victim: Session; other: Session; operator: Session; member: Session };
}

/** `METHOD /url` of every running route without a row, and of every row without a route. */
export function matrixCoverage(process: string, routes: Route[]): string[] {
  const rows = AUTHORIZATION_MATRIX[process] ?? {};
  const built = BUILT_ROUTES[process];
  const running = new Set(
    routes
      .map((route) => `${route.method} ${route.url}`)
      .map((key) => (built?.pattern.test(key) ? built.row : key)),
  );
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
  const [method, routeTemplate] = key.split(' ') as [string, string];
  const template = row.path ?? routeTemplate;
  const path = (row.id ? template.replace(':id', creds.victimIds[row.id]) : template).replace(
    ':eventId',
    'evt_0000000000000000',
  );
  const problems: string[] = [];
  const expect = async (name: string, credential: Credential | undefined, statuses: number[]) => {
    const answer = await send(process, method, path, credential, row.body);
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
    await expect('without credentials', undefined, [row.okStatus ?? 200, 503]);
    return problems;
  }
  if (
    row.access === 'customer_session' ||
    row.access === 'operator_session' ||
    row.access === 'owner_session' ||
    row.access === 'session'
  ) {
    const session = (s: Session, withCsrf = true): Credential => ({ session: s, withCsrf });
    const { victim, other, operator } = creds.sessions;
    await expect('without a session', undefined, [401]);
    await expect('with an unknown session', session({ cookie: 'x'.repeat(43), csrf: 'x' }), [401]);
    await expect('with an API key instead', `Bearer ${creds.victimKey}`, [401]);
    const own = row.access === 'operator_session' ? operator : victim;
    if (!['GET', 'HEAD', 'OPTIONS'].includes(method))
      await expect('without the CSRF token', session(own, false), [403]);
    if (row.access === 'session') return problems;
    const wrongRole = row.access === 'operator_session' ? victim : operator;
    await expect("with the other role's session", session(wrongRole), [403]);
    if (row.access === 'operator_session') return problems;
    if (row.access === 'owner_session')
      await expect("with a member's session of the account", session(creds.sessions.member), [403]);
    if (row.id) await expect("with another customer's session", session(other), [404]);
    else if (method === 'GET')
      await expect("with another customer's session", session(other), [200]);
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
  if (row.access === 'plan')
    await expect(
      'with a key of the account scope alone',
      `Bearer ${creds.otherAccountOnlyKey}`,
      [403],
    );
  if (row.id) {
    await expect("with another account's key", `Bearer ${creds.otherKey}`, [404]);
  } else if (method === 'GET') {
    // Its own data only: the answer must not name any of the victim's ids (checked above).
    await expect("with another account's key", `Bearer ${creds.otherKey}`, [200]);
  }
  return problems;
}
