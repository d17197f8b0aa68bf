import fc from 'fast-check';
import { status } from '@grpc/grpc-js';
import WebSocket from 'ws';
import {
  contentType,
  headerValue,
  httpMethod,
  nastyBody,
  nastyJson,
  nastyString,
  pathSegment,
  queryString,
} from './arbitraries';
import {
  checkRoute,
  credentialHeaders,
  matrixCoverage,
  type MatrixCredentials,
  type Send,
  type Session,
} from './authorization-checks';
import { AUTHORIZATION_MATRIX, DASHBOARD_USERS, WEBHOOK } from './authorization-matrix';
import { fuzzConfig, runBatch } from './fuzz-config';
import { startFuzzStack, type FuzzStack, type Route } from './fuzz-stack';
import { lengthDelimited, rawGrpcClient, SERVER_FAILURE_CODES } from './grpc-raw';
import { rawRequest, restBodyViolationOf, violationOf, type RawRequest } from './raw-http';
import { GATEWAY_PROCESS, REST_APIS } from './rest-apis';

/**
 * Every public edge fuzzed against the real processes (ADR 0501): REST bodies, paths and query
 * strings of every REST_APIS process; JSON-RPC bodies and URL paths of the gateway; its WebSocket
 * upgrade and messages; BorApi gRPC metadata and messages (and billing.v1). Pass, per request: no
 * 5xx for a client mistake, no hang, no connection dropped without an answer, REST errors in
 * COMPAT's body; per batch: every process alive and /healthz 200.
 */
const config = fuzzConfig();
const limit =
  config.batchTimeLimitMs === undefined ? '' : `, at most ${config.batchTimeLimitMs / 1000} s`;
process.stdout.write(
  `fuzz seed ${config.seed}, ${config.runs} cases per batch${limit} (replay: FUZZ_SEED=${config.seed} FUZZ_RUNS=${config.runs} npm run fuzz)\n`,
);

describe('public edges under fuzzing', () => {
  let stack: FuzzStack;
  let apiKey: string;
  let operatorToken: string;
  let polygonToken: string;

  /** Dashboard sessions the REST fuzz sends (a customer's and the operator's). */
  let fuzzSessions: { customer: Session; operator: Session };

  /** Signs up (or in) at the stack's dashboard: the session cookie and its CSRF token. */
  const dashboardSession = async (
    how: 'sign-up' | 'sign-in',
    user: { email: string; password: string; invitation?: string },
  ): Promise<Session> => {
    const response = await fetch(`${stack.urlOf('dashboard')}/api/auth/${how}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(user),
    });
    const text = await response.text();
    const cookie = /mrd_session=([^;]+)/.exec(response.headers.get('set-cookie') ?? '')?.[1];
    if (response.status >= 300 || cookie === undefined)
      throw new Error(`dashboard ${how} ${user.email}: ${response.status} ${text}`);
    return {
      cookie: decodeURIComponent(cookie),
      csrf: (JSON.parse(text) as { csrf_token: string }).csrf_token,
    };
  };
  const operatorSession = () =>
    dashboardSession('sign-in', {
      email: stack.endpoints.dashboard!.operatorEmail,
      password: stack.endpoints.dashboard!.operatorPassword,
    });

  beforeAll(async () => {
    stack = await startFuzzStack();
    apiKey = stack.endpoints.demo.apiKey;
    operatorToken = stack.endpoints.demo.operatorToken;
    polygonToken = stack.endpoints.demo.accessTokens['polygon-mainnet']!;
    fuzzSessions = {
      customer: await dashboardSession('sign-up', {
        email: 'fuzz-customer@meridian.example',
        password: 'fuzz customer password',
      }),
      operator: await operatorSession(),
    };
  }, 300_000);
  afterAll(async () => {
    await stack?.stop();
  }, 60_000);

  describe('authorization matrix (every REST route)', () => {
    let creds: MatrixCredentials;

    const send: Send = async (process, method, path, credential, body) => {
      const headers = {
        ...credentialHeaders(credential),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      };
      if (process === 'dashboard') {
        // Byte for byte: the relay route takes every method, TRACE included (fetch refuses it).
        const outcome = await rawRequest(stack.urlOf(process), {
          method,
          path,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        if (outcome.kind !== 'answer') return { status: 0, text: outcome.kind };
        return { status: outcome.status, text: outcome.body };
      }
      const response = await fetch(`${stack.urlOf(process)}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, text: await response.text() };
    };
    const call = async <T>(
      method: string,
      path: string,
      bearer: string,
      body?: unknown,
      process = 'billing-ledger',
    ) => {
      const answer = await send(
        process,
        method,
        process === 'webhook-matcher' ? `/api/v1${path}` : path,
        `Bearer ${bearer}`,
        body,
      );
      if (answer.status >= 300)
        throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
      return JSON.parse(answer.text) as T;
    };

    beforeAll(async () => {
      type Created = { account: { id: string }; api_key: { id: string; key: string } };
      const victim = await call<Created>('POST', '/api/v1/admin/accounts', operatorToken, {
        name: 'matrix victim',
        plan: 'starter',
      });
      const token = await call<{ id: string }>(
        'POST',
        '/api/v1/access-tokens',
        victim.api_key.key,
        {
          network: 'eth-mainnet',
        },
      );
      const other = await call<Created>('POST', '/api/v1/admin/accounts', operatorToken, {
        name: 'matrix other',
        plan: 'starter',
      });
      const list = await call<{ id: string }>(
        'POST',
        '/address-lists',
        victim.api_key.key,
        {
          name: 'victim list',
        },
        'webhook-matcher',
      );
      const webhook = await call<{ id: string }>(
        'POST',
        '/webhooks',
        victim.api_key.key,
        WEBHOOK,
        'webhook-matcher',
      );
      const accountOnly = await call<{ key: string }>(
        'POST',
        '/api/v1/api-keys',
        other.api_key.key,
        {
          scopes: ['account'],
        },
      );
      const webhooksOnly = await call<{ key: string }>(
        'POST',
        '/api/v1/api-keys',
        other.api_key.key,
        {
          scopes: ['webhooks'],
        },
      );
      // Dashboard: two customers signed up there, the victim owning a key and a webhook.
      const victimSession = await dashboardSession('sign-up', DASHBOARD_USERS.victim);
      await dashboardSession('sign-up', DASHBOARD_USERS.other);
      const otherSession = await dashboardSession('sign-in', DASHBOARD_USERS.other);
      const asVictim = async <T>(method: string, path: string, body: unknown) => {
        const answer = await send(
          'dashboard',
          method,
          path,
          { session: victimSession, withCsrf: true },
          body,
        );
        if (answer.status >= 300)
          throw new Error(`dashboard ${method} ${path}: ${answer.status} ${answer.text}`);
        return JSON.parse(answer.text) as T;
      };
      const dashboardKey = await asVictim<{ id: string }>('POST', '/api/api-keys', {
        name: 'victim key',
        scopes: ['audit'],
      });
      const dashboardWebhook = await asVictim<{ id: string }>(
        'POST',
        '/api/relay/webhooks/webhooks',
        WEBHOOK,
      );
      // A member of the victim's account, and a pending team invitation of it (ADR 0604).
      const memberInvitation = await asVictim<{ code: string }>('POST', '/api/team/invitations', {
        email: DASHBOARD_USERS.member.email,
      });
      const memberSession = await dashboardSession('sign-up', {
        ...DASHBOARD_USERS.member,
        invitation: memberInvitation.code,
      });
      const teamInvitation = await asVictim<{ id: string }>('POST', '/api/team/invitations', {
        email: 'matrix-pending@meridian.example',
      });
      const victimUser = await send(
        'dashboard',
        'GET',
        '/api/auth/session',
        { session: victimSession, withCsrf: true },
        undefined,
      );
      const victimUserId = (JSON.parse(victimUser.text) as { user: { id: string } }).user.id;
      creds = {
        operatorToken,
        sessions: {
          victim: victimSession,
          other: otherSession,
          operator: await operatorSession(),
          member: memberSession,
        },
        victimKey: victim.api_key.key,
        victimIds: {
          account: victim.account.id,
          api_key: victim.api_key.id,
          access_token: token.id,
          webhook: webhook.id,
          address_list: list.id,
          dashboard_api_key: dashboardKey.id,
          dashboard_webhook: dashboardWebhook.id,
          dashboard_member: victimUserId,
          dashboard_team_invitation: teamInvitation.id,
        },
        otherKey: other.api_key.key,
        otherWebhooksOnlyKey: webhooksOnly.key,
        otherAccountOnlyKey: accountOnly.key,
      };
    });

    it('has a row for every route of every REST API (the dashboard included), and no row for a route that is gone', () => {
      const problems = REST_APIS.flatMap((api) =>
        matrixCoverage(api.process, stack.routesOf(api.process)),
      );
      expect(problems).toEqual([]);
    });

    it.each(REST_APIS.map((api) => [api.process]))(
      "%s: 401 without or with a bad credential, 403 for the wrong scope, 404 for another account's id, never its data",
      async (process) => {
        const problems: string[] = [];
        for (const [key, row] of Object.entries(AUTHORIZATION_MATRIX[process] ?? {}))
          problems.push(...(await checkRoute(send, process, key, row, creds)));
        expect(problems).toEqual([]);
      },
    );

    it("leaves the victim's credentials working (no refused call changed anything)", async () => {
      const keys = await call<{ items: Array<{ id: string }> }>(
        'GET',
        '/api/v1/api-keys',
        creds.victimKey,
      );
      expect(keys.items.map((item) => item.id)).toContain(creds.victimIds.api_key);
      const tokens = await call<{ items: Array<{ id: string }> }>(
        'GET',
        '/api/v1/access-tokens',
        creds.victimKey,
      );
      expect(tokens.items.map((item) => item.id)).toEqual([creds.victimIds.access_token]);
    });
  });

  const describeRequest = (base: string, request: RawRequest) =>
    `${request.method} ${base}${request.path.slice(0, 300)} headers=${JSON.stringify(request.headers)} body=${JSON.stringify(
      request.body === undefined ? undefined : String(request.body).slice(0, 300),
    )}`;

  const authHeader = fc.oneof(
    fc.constant(undefined),
    headerValue,
    fc.constant('__api_key__'),
    fc.constant('__operator__'),
    fc.constant('__customer_session__'),
    fc.constant('__operator_session__'),
  );

  const fillRoute = (route: Route) =>
    fc.array(pathSegment, { minLength: 4, maxLength: 4 }).map((segments) => {
      let index = 0;
      return route.url.replace(/:[A-Za-z_]+/g, () => segments[index++] ?? 'x');
    });

  describe.each(REST_APIS.map((api) => [api.process]))('REST: %s', (process) => {
    it('bodies, paths and query strings: no 5xx, no hang, no drop, errors in our body', async () => {
      const base = stack.urlOf(process);
      const routes = stack.routesOf(process);
      const path = fc.oneof(
        { arbitrary: fc.constantFrom(...routes).chain(fillRoute), weight: 6 },
        {
          arbitrary: fc.array(pathSegment, { maxLength: 5 }).map((s) => `/${s.join('/')}`),
          weight: 1,
        },
      );
      const requestOf = fc.record({
        method: fc.oneof(
          { arbitrary: fc.constantFrom(...routes.map((r) => r.method)), weight: 4 },
          { arbitrary: httpMethod, weight: 1 },
        ),
        path,
        query: fc.option(queryString, { freq: 2 }),
        body: nastyBody,
        type: contentType,
        auth: authHeader,
      });
      await runBatch(
        fc.asyncProperty(requestOf, async (c) => {
          const headers: Record<string, string> = {};
          if (c.type !== undefined) headers['content-type'] = c.type;
          if (c.auth === '__api_key__') headers['authorization'] = `Bearer ${apiKey}`;
          else if (c.auth === '__operator__') headers['authorization'] = `Bearer ${operatorToken}`;
          else if (c.auth === '__customer_session__' || c.auth === '__operator_session__') {
            const session =
              c.auth === '__customer_session__' ? fuzzSessions.customer : fuzzSessions.operator;
            Object.assign(headers, credentialHeaders({ session, withCsrf: true }));
          } else if (c.auth !== undefined) headers['authorization'] = c.auth;
          const request: RawRequest = {
            method: c.method,
            path: c.query === null ? c.path : `${c.path}?${c.query}`,
            headers,
            body: c.method === 'GET' || c.method === 'HEAD' ? undefined : c.body,
          };
          const outcome = await rawRequest(base, request);
          const problem =
            violationOf(outcome) ??
            (c.method === 'HEAD' ? undefined : restBodyViolationOf(outcome));
          if (problem) throw new Error(`${problem}\n  request: ${describeRequest(base, request)}`);
        }),
        config,
        `rest:${process}`,
      );
      await stack.assertHealthy();
    }, 600_000);
  });

  it('JSON-RPC over HTTP: bodies and URL paths', async () => {
    const base = stack.urlOf(GATEWAY_PROCESS);
    const method = fc.oneof(
      fc.constantFrom(
        'eth_blockNumber',
        'eth_chainId',
        'eth_getBalance',
        'eth_call',
        'eth_getLogs',
        'eth_getBlockByNumber',
        'eth_getTransactionReceipt',
        'eth_subscribe',
        'eth_sendRawTransaction',
        'debug_traceTransaction',
        'bor_getAuthor',
        'net_version',
        'web3_clientVersion',
      ),
      nastyString,
    );
    const call = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant('2.0'), nastyJson),
        id: fc.oneof(fc.integer(), nastyString, fc.constant(null), nastyJson),
        method: fc.oneof(method, nastyJson),
        params: fc.oneof(
          fc.array(fc.oneof(fc.constantFrom('latest', '0x0', '0x1', 'pending'), nastyJson), {
            maxLength: 4,
          }),
          nastyJson,
        ),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      { arbitrary: call.map((value) => JSON.stringify(value)), weight: 6 },
      {
        arbitrary: fc.array(call, { maxLength: 12 }).map((value) => JSON.stringify(value)),
        weight: 2,
      },
      { arbitrary: nastyBody, weight: 2 },
    );
    const tokenPath = fc.oneof(
      { arbitrary: fc.constant(`/${polygonToken}/`), weight: 6 },
      { arbitrary: fc.constant(`/${polygonToken}`), weight: 1 },
      { arbitrary: pathSegment.map((segment) => `/${segment}/`), weight: 2 },
      {
        arbitrary: fc
          .array(pathSegment, { maxLength: 4 })
          .map((s) => `/${polygonToken}/${s.join('/')}`),
        weight: 1,
      },
    );
    const requestOf = fc.record({
      method: fc.oneof(
        { arbitrary: fc.constant('POST'), weight: 6 },
        { arbitrary: httpMethod, weight: 1 },
      ),
      path: tokenPath,
      query: fc.option(queryString, { freq: 4 }),
      body,
      type: contentType,
    });
    await runBatch(
      fc.asyncProperty(requestOf, async (c) => {
        const request: RawRequest = {
          method: c.method,
          path: c.query === null ? c.path : `${c.path}?${c.query}`,
          headers: c.type === undefined ? {} : { 'content-type': c.type },
          body: c.method === 'GET' || c.method === 'HEAD' ? undefined : c.body,
        };
        const problem = violationOf(await rawRequest(base, request));
        if (problem) throw new Error(`${problem}\n  request: ${describeRequest(base, request)}`);
      }),
      config,
      'jsonrpc-http',
    );
    await stack.assertHealthy();
  }, 600_000);

  it('WebSocket: the upgrade (path, headers)', async () => {
    const base = stack.urlOf(GATEWAY_PROCESS).replace('http:', 'ws:');
    const upgrade = fc.record({
      path: fc.oneof(
        fc.constant(`/${polygonToken}/`),
        fc.constant(`/${polygonToken}`),
        pathSegment.map((segment) => `/${segment}`),
        fc.array(pathSegment, { maxLength: 3 }).map((s) => `/${polygonToken}/${s.join('/')}`),
      ),
      headers: fc.dictionary(
        fc.constantFrom(
          'origin',
          'authorization',
          'x-request-id',
          'sec-websocket-extensions',
          'x-forwarded-for',
        ),
        headerValue,
        { maxKeys: 3 },
      ),
      // Subprotocols go through the client's own argument: as a raw header, the client would
      // refuse the server's (correct) echo of one it did not ask for.
      protocols: fc.array(headerValue, { maxLength: 3 }),
    });
    await runBatch(
      fc.asyncProperty(upgrade, async (c) => {
        const outcome = await openWebSocket(`${base}${c.path}`, c.headers, c.protocols);
        if (outcome.problem)
          throw new Error(
            `${outcome.problem}\n  upgrade: ${c.path} ${JSON.stringify(c.headers)} protocols ${JSON.stringify(c.protocols)}`,
          );
        outcome.socket?.terminate();
      }),
      config,
      'ws-upgrade',
    );
    await stack.assertHealthy();
  }, 600_000);

  it('WebSocket: messages (the session answers a good call after any of them, or closes cleanly)', async () => {
    const url = `${stack.urlOf(GATEWAY_PROCESS).replace('http:', 'ws:')}/${polygonToken}/`;
    const message = fc.oneof(
      nastyBody.filter((text): text is string => text !== undefined && text.length < 2_000_000),
      fc
        .record({
          jsonrpc: fc.constant('2.0'),
          id: fc.oneof(fc.integer(), nastyString),
          method: nastyString,
          params: nastyJson,
        })
        .map((value) => JSON.stringify(value)),
      fc
        .record({
          jsonrpc: fc.constant('2.0'),
          id: fc.integer(),
          method: fc.constantFrom('eth_subscribe', 'eth_unsubscribe'),
          params: fc.oneof(
            fc.array(
              fc.oneof(fc.constantFrom('newHeads', 'logs', 'newPendingTransactions'), nastyJson),
              { maxLength: 3 },
            ),
            nastyJson,
          ),
        })
        .map((value) => JSON.stringify(value)),
      fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
    );
    await runBatch(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 5 }), async (messages) => {
        const opened = await openWebSocket(url, {});
        if (!opened.socket) throw new Error(`could not open a session: ${opened.problem}`);
        const problem = await probeAfter(opened.socket, messages);
        opened.socket.terminate();
        if (problem)
          throw new Error(
            `${problem}\n  messages: ${JSON.stringify(messages.map((m) => String(m).slice(0, 200)))}`,
          );
      }),
      config,
      'ws-messages',
    );
    await stack.assertHealthy();
  }, 600_000);

  const BOR_METHODS = [
    'GetRootHash',
    'GetVoteOnHash',
    'HeaderByNumber',
    'BlockByNumber',
    'TransactionReceipt',
    'BorBlockReceipt',
    'GetStartBlockHeimdallSpanID',
    'GetAuthor',
    'GetTdByHash',
    'GetTdByNumber',
    'GetBlockInfoInBatch',
    'NoSuchMethod',
  ];
  const grpcMessage = fc.oneof(
    fc.uint8Array({ maxLength: 256 }).map((bytes) => Buffer.from(bytes)),
    fc
      .tuple(fc.integer({ min: 1, max: 5 }), nastyString)
      .map(([field, text]) => lengthDelimited(field, Buffer.from(text, 'utf8'))),
    // Oversized fields, within and beyond the 4 MiB message limit.
    fc
      .tuple(
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom(64 * 1024, 1024 * 1024, 5 * 1024 * 1024),
      )
      .map(([field, size]) => lengthDelimited(field, Buffer.alloc(size, 0x61))),
    fc.constant(Buffer.alloc(0)),
  );
  const grpcMetadata = (tokens: string[]) =>
    fc.dictionary(
      fc.oneof(
        fc.constantFrom('x-access-token', 'authorization', 'x-request-id', 'grpc-timeout-x'),
        fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/).filter((key) => !key.startsWith('grpc-')),
      ),
      fc.oneof(
        fc.constantFrom(...tokens),
        headerValue.filter((v) => v.length < 4_000),
      ),
      { maxKeys: 3 },
    );

  it('gRPC BorApi: metadata and messages; the channel keeps serving', async () => {
    const target = stack.grpcTargetOf(GATEWAY_PROCESS);
    const client = rawGrpcClient(target, 'bor.BorApi', BOR_METHODS);
    try {
      await runBatch(
        fc.asyncProperty(
          fc.constantFrom(...BOR_METHODS),
          grpcMessage,
          grpcMetadata([polygonToken]),
          async (method, message, metadata) => {
            const answer = await client.call(method, message, metadata);
            if (SERVER_FAILURE_CODES.has(answer.code))
              throw new Error(
                `BorApi ${method} answered ${status[answer.code]} (${answer.details.slice(0, 200)}) to ${message.length} bytes ${message.subarray(0, 40).toString('hex')} metadata ${JSON.stringify(metadata).slice(0, 300)}`,
              );
          },
        ),
        config,
        'grpc-bor',
      );
      // The same channel still answers a good call (an oversized field once hung it for good).
      const good = await client.call('HeaderByNumber', lengthDelimited(1, Buffer.from('latest')), {
        'x-access-token': polygonToken,
      });
      expect(status[good.code]).toBe('OK');
    } finally {
      client.close();
    }
    await stack.assertHealthy();
  }, 600_000);

  it('gRPC billing.v1 (internal): messages; the channel keeps serving', async () => {
    const methods = ['ResolveAccessToken', 'ResolveApiKey', 'GetAccountState'];
    const client = rawGrpcClient(
      stack.grpcTargetOf('billing-ledger'),
      'billing.v1.BillingService',
      methods,
    );
    try {
      await runBatch(
        fc.asyncProperty(
          fc.constantFrom(...methods),
          grpcMessage,
          grpcMetadata([apiKey]),
          async (method, message, metadata) => {
            const answer = await client.call(method, message, metadata);
            if (SERVER_FAILURE_CODES.has(answer.code))
              throw new Error(
                `billing.v1 ${method} answered ${status[answer.code]} (${answer.details.slice(0, 200)}) to ${message.length} bytes ${message.subarray(0, 40).toString('hex')}`,
              );
          },
        ),
        config,
        'grpc-billing',
      );
      const good = await client.call('ResolveApiKey', lengthDelimited(1, Buffer.from(apiKey)), {});
      expect(status[good.code]).toBe('OK');
    } finally {
      client.close();
    }
    await stack.assertHealthy();
  }, 600_000);
});

/** Opens a WebSocket; an HTTP refusal below 500 is a fine answer, a 5xx, drop or hang is not. */
function openWebSocket(
  url: string,
  headers: Record<string, string>,
  protocols: string[] = [],
): Promise<{ socket?: WebSocket; problem?: string }> {
  return new Promise((resolve) => {
    let socket: WebSocket;
    try {
      socket = new WebSocket(url, protocols, { headers, handshakeTimeout: 10_000 });
    } catch {
      // The client would not send it (an invalid URL or header): not a server finding.
      resolve({});
      return;
    }
    socket.on('open', () => resolve({ socket }));
    socket.on('unexpected-response', (_request, response) => {
      response.resume();
      resolve(
        (response.statusCode ?? 0) >= 500
          ? { problem: `upgrade answered ${response.statusCode}` }
          : {},
      );
      socket.terminate();
    });
    socket.on('error', (error) => resolve({ problem: `upgrade failed: ${error.message}` }));
  });
}

/**
 * Sends `messages`, then eth_chainId; the session must answer it within the timeout, or have
 * closed with a close frame (a code other than 1006, "closed without one").
 */
function probeAfter(
  socket: WebSocket,
  messages: Array<string | Buffer>,
): Promise<string | undefined> {
  const probeId = 'fuzz-probe';
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('no answer to eth_chainId within 10 s (hang)'), 10_000);
    const finish = (problem?: string) => {
      clearTimeout(timer);
      resolve(problem);
    };
    socket.on('message', (data) => {
      const text = data.toString();
      if (text.includes(`"${probeId}"`)) finish();
    });
    socket.on('close', (code) =>
      finish(
        code === 1006 ? 'the server closed the session without a close frame (1006)' : undefined,
      ),
    );
    socket.on('error', () => undefined);
    for (const message of messages) socket.send(message);
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: probeId, method: 'eth_chainId', params: [] }));
  });
}
