import WebSocket from 'ws';
import {
  createTestDatabase,
  startAnvil,
  type AnvilInstance,
  type BillingLedgerProcess,
  type TestDatabase,
} from '@meridian/testing';
import {
  provisionNamespace,
  rpc,
  startBillingLedger,
  startGateway,
  type RunningGateway,
} from './gateway-harness';

/**
 * "Revoked means revoked": a token rolled or deleted at the REAL billing-ledger ends its open
 * WebSocket sessions on every replica at once, subscriptions included, without the client
 * sending anything. No bound in ms (a flake on a loaded CI): the tokens stay cached for
 * CREDENTIAL_TTL_MS (10 min), far past the test's wait, so only the revocation feed can end
 * them, and it says so (1008, -32041). An account that runs out of CU ends its sessions that hold
 * subscriptions the same way (notifications are not billed: no feed runs on unpaid). Two
 * gateways stand for two replicas (each watches the feeds on its own).
 */
const OPERATOR_TOKEN = 'op_gateway_revocation_0123456789';

interface Session {
  ws: WebSocket;
  messages: Record<string, unknown>[];
  closed: Promise<{ code: number; at: number }>;
}

describe('rpc-gateway: revocation reaches live sessions (real billing-ledger)', () => {
  let db: TestDatabase;
  let nats: Awaited<ReturnType<typeof provisionNamespace>>;
  let anvil: AnvilInstance;
  let ledger: BillingLedgerProcess;
  let replicas: RunningGateway[];
  let apiKey: string;

  beforeAll(async () => {
    [db, nats, anvil] = await Promise.all([
      createTestDatabase({ prefix: 'gw_revoke' }),
      provisionNamespace(),
      startAnvil({ chainId: 1 }),
    ]);
    ledger = await startBillingLedger({
      databaseUrl: db.url,
      nats,
      operatorToken: OPERATOR_TOKEN,
      startTimeoutMs: 240_000,
    });
    const created = await ledger.call('POST', '/api/v1/admin/accounts', OPERATOR_TOKEN, {
      name: 'gateway revocation',
      type: 'individual',
      plan: 'growth',
    });
    apiKey = (created['api_key'] as { key: string }).key;
    const env = {
      REGION: 'eu',
      NATS_URL: nats.url,
      NATS_PREFIX: nats.prefix,
      BILLING_GRPC_URL: ledger.grpcTarget,
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [anvil.url] }),
      GRPC_ENABLED: 'false',
    };
    replicas = [await startGateway(env), await startGateway(env)];
  }, 400_000);

  afterAll(async () => {
    await Promise.all((replicas ?? []).map((g) => g.stop().catch(() => undefined)));
    await ledger?.stop();
    await anvil?.stop();
    await nats?.cleanup().catch(() => undefined);
    await db?.drop().catch(() => undefined);
  });

  const newToken = async () => {
    const created = await ledger.call('POST', '/api/v1/access-tokens', apiKey, {
      network: 'eth-mainnet',
    });
    return { id: created['id'] as string, token: created['token'] as string };
  };

  const open = async (
    gateway: RunningGateway,
    token: string,
    subscribe = true,
  ): Promise<Session> => {
    const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/${token}`);
    const messages: Record<string, unknown>[] = [];
    ws.on('message', (data) => messages.push(JSON.parse(data.toString()) as never));
    const closed = new Promise<{ code: number; at: number }>((resolve) =>
      ws.once('close', (code) => resolve({ code, at: Date.now() })),
    );
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`${res.statusCode}`)));
    });
    if (!subscribe) return { ws, messages, closed };
    // A live subscription: what kept streaming after a roll before.
    ws.send(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }),
    );
    const deadline = Date.now() + 10_000;
    while (!messages.some((m) => m['id'] === 1) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(typeof messages.find((m) => m['id'] === 1)?.['result']).toBe('string');
    return { ws, messages, closed };
  };

  const endsRevoked = async (session: Session) => {
    const outcome = await Promise.race([
      session.closed,
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 20_000)),
    ]);
    expect(outcome).toBeDefined();
    expect(outcome!.code).toBe(1008);
    expect(session.messages.at(-1)).toMatchObject({ id: null, error: { code: -32041 } });
  };

  it('rolling a token closes its sessions on every replica at once; the new token works', async () => {
    const { id, token } = await newToken();
    const sessions = [
      await open(replicas[0]!, token),
      await open(replicas[1]!, token),
      await open(replicas[1]!, token),
    ];
    const other = await newToken();
    const bystander = await open(replicas[0]!, other.token);

    const rolled = await ledger.call('POST', `/api/v1/access-tokens/${id}/roll`, apiKey);
    await Promise.all(sessions.map((s) => endsRevoked(s)));

    // Another token of the same account is untouched.
    expect(bystander.ws.readyState).toBe(WebSocket.OPEN);
    bystander.ws.close();
    // The old token is refused on HTTP and on upgrade; the rolled one is served.
    const call = { jsonrpc: '2.0', id: 7, method: 'eth_blockNumber', params: [] };
    expect((await rpc(`${replicas[0]!.url}/${token}`, call)).status).toBe(401);
    await expect(open(replicas[1]!, token)).rejects.toThrow('401');
    const fresh = rolled['token'] as string;
    expect((await rpc(`${replicas[1]!.url}/${fresh}`, call)).json).toMatchObject({
      result: expect.stringMatching(/^0x/),
    });
  }, 60_000);

  it('deleting a token closes its sessions the same way', async () => {
    const { id, token } = await newToken();
    const sessions = [await open(replicas[0]!, token), await open(replicas[1]!, token)];
    await ledger.call('DELETE', `/api/v1/access-tokens/${id}`, apiKey);
    await Promise.all(sessions.map((s) => endsRevoked(s)));
  }, 60_000);

  it('an account that runs out of CU ends its sessions that hold subscriptions on every replica (-32040, 1008); a session without one stays and is answered -32040', async () => {
    const created = await ledger.call('POST', '/api/v1/admin/accounts', OPERATOR_TOKEN, {
      name: 'runs out',
      type: 'team',
      plan: 'enterprise',
      contract: { allowance_cu: 100, node_rps: 1_000 },
    });
    const key = (created['api_key'] as { key: string }).key;
    const token = (
      await ledger.call('POST', '/api/v1/access-tokens', key, { network: 'eth-mainnet' })
    )['token'] as string;
    // 2 × 20 CU for the subscriptions: 60 CU left.
    const subscribed = [await open(replicas[0]!, token), await open(replicas[1]!, token)];
    const plain = await open(replicas[1]!, token, false);

    // Spend the rest over HTTP until the flip reaches a replica (usage flush, ledger, feed).
    const call = { jsonrpc: '2.0', id: 9, method: 'eth_blockNumber', params: [] };
    const deadline = Date.now() + 20_000;
    let refused = false;
    while (!refused && Date.now() < deadline) {
      refused = (await rpc(`${replicas[0]!.url}/${token}`, call)).status === 402;
      if (!refused) await new Promise((r) => setTimeout(r, 100));
    }
    expect(refused).toBe(true);

    for (const session of subscribed) {
      const outcome = await Promise.race([
        session.closed,
        new Promise<undefined>((r) => setTimeout(() => r(undefined), 5_000)),
      ]);
      expect(outcome?.code).toBe(1008);
      expect(session.messages.at(-1)).toMatchObject({ id: null, error: { code: -32040 } });
    }
    // The session without a subscription is still open; its calls are refused like HTTP's.
    expect(plain.ws.readyState).toBe(WebSocket.OPEN);
    plain.ws.send(JSON.stringify(call));
    const answerDeadline = Date.now() + 5_000;
    while (!plain.messages.some((m) => m['id'] === 9) && Date.now() < answerDeadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(plain.messages.find((m) => m['id'] === 9)).toMatchObject({ error: { code: -32040 } });
    // A new subscription is refused too.
    plain.ws.send(
      JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'eth_subscribe', params: ['newHeads'] }),
    );
    while (!plain.messages.some((m) => m['id'] === 10) && Date.now() < answerDeadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(plain.messages.find((m) => m['id'] === 10)).toMatchObject({ error: { code: -32040 } });
    plain.ws.close();
  }, 60_000);
});
