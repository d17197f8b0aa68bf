// Test-only file; see gateway-harness.ts for the boundary rule note.
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
 * "Usage recorded in billing-ledger equals the CU of the calls made, exactly": the REAL
 * billing-ledger (own process, own database, own NATS namespace; none of its code imported)
 * resolves the access token and applies the usage events the gateway publishes. CU are
 * written out by hand from COMPAT (network E: 20 per call, `debug_*` ×2) rather than taken
 * from the library the gateway uses.
 */
const OPERATOR_TOKEN = 'op_gateway_usage_test_0123456789';
const E = 20;

describe('rpc-gateway metering against the real billing-ledger', () => {
  let db: TestDatabase;
  let nats: Awaited<ReturnType<typeof provisionNamespace>>;
  let anvil: AnvilInstance;
  let ledger: BillingLedgerProcess;
  let gateway: RunningGateway;
  let apiKey: string;
  let token: string;

  const call = (method: string, path: string, body?: unknown, auth = apiKey) =>
    ledger.call(method, path, auth, body);

  beforeAll(async () => {
    [db, nats, anvil] = await Promise.all([
      createTestDatabase({ prefix: 'gw_usage' }),
      provisionNamespace(),
      startAnvil({ chainId: 1 }),
    ]);
    ledger = await startBillingLedger({
      databaseUrl: db.url,
      nats,
      operatorToken: OPERATOR_TOKEN,
      startTimeoutMs: 90_000,
    });

    const created = await call(
      'POST',
      '/api/v1/admin/accounts',
      { name: 'gateway usage', type: 'individual', plan: 'growth' },
      OPERATOR_TOKEN,
    );
    apiKey = (created['api_key'] as { key: string }).key;
    token = (await call('POST', '/api/v1/access-tokens', { network: 'eth-mainnet' }))[
      'token'
    ] as string;

    gateway = await startGateway(gatewayEnv());
  }, 180_000);

  const gatewayEnv = () => ({
    REGION: 'eu',
    NATS_URL: nats.url,
    NATS_PREFIX: nats.prefix,
    BILLING_GRPC_URL: ledger.grpcTarget,
    UPSTREAMS: JSON.stringify({ 'eth-mainnet': [anvil.url] }),
    USAGE_FLUSH_MS: '200',
    MAX_LOGS_BLOCK_RANGE: '100',
  });

  afterAll(async () => {
    await gateway?.stop().catch(() => undefined);
    await ledger?.stop();
    await anvil?.stop();
    await nats?.cleanup().catch(() => undefined);
    await db?.drop().catch(() => undefined);
  });

  it('usage and balance in billing-ledger equal the CU of the calls made, exactly', async () => {
    const balanceBefore = await call('GET', '/api/v1/account/balance');
    const url = `${gateway.url}/${token}/`;
    const expected = new Map<string, { calls: number; cu: number }>();
    const billed = (method: string, cu: number, calls = 1) => {
      const line = expected.get(method) ?? { calls: 0, cu: 0 };
      line.calls += calls;
      line.cu += cu * calls;
      expected.set(method, line);
    };

    // Singles: three relayed calls and a local answer.
    for (let i = 0; i < 3; i++) {
      const a = await rpc(url, { jsonrpc: '2.0', id: i, method: 'eth_blockNumber', params: [] });
      expect((a.json as { result?: string }).result).toMatch(/^0x/);
    }
    billed('eth_blockNumber', E, 3);
    expect((await rpc(url, { jsonrpc: '2.0', id: 9, method: 'eth_chainId' })).json).toEqual({
      jsonrpc: '2.0',
      id: 9,
      result: '0x1',
    });
    billed('eth_chainId', E);

    // A batch of 10: 7 served (one of them a notification: run, billed, not answered),
    // 3 refused by the gateway (not billed).
    const zero = `0x${'00'.repeat(20)}`;
    const batch = await rpc(url, [
      { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [zero, 'latest'] },
      { jsonrpc: '2.0', id: 2, method: 'eth_getBalance', params: [zero, 'latest'] },
      { jsonrpc: '2.0', id: 3, method: 'eth_getBlockByNumber', params: ['0x0', false] },
      { jsonrpc: '2.0', id: 4, method: 'net_version', params: [] },
      { jsonrpc: '2.0', id: 5, method: 'eth_gasPrice', params: [] },
      { jsonrpc: '2.0', method: 'eth_blockNumber', params: [] },
      { jsonrpc: '2.0', id: 7, method: 'eth_getCode', params: [zero, 'latest'] },
      { jsonrpc: '2.0', id: 8, method: 'no_suchMethod', params: [] },
      {
        jsonrpc: '2.0',
        id: 9,
        method: 'eth_getLogs',
        params: [{ fromBlock: '0x0', toBlock: '0x1000' }],
      },
      { jsonrpc: '1.0', id: 10, method: 'eth_blockNumber', params: [] },
    ]);
    const answers = batch.json as { id: number; result?: unknown; error?: { code: number } }[];
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3, 4, 5, 7, 8, 9, 10]);
    expect(answers.slice(0, 6).filter((a) => a.result === undefined)).toEqual([]);
    expect(answers.slice(6).map((a) => a.error?.code)).toEqual([-32601, -32005, -32600]);
    billed('eth_getBalance', E, 2);
    billed('eth_getBlockByNumber', E);
    billed('net_version', E);
    billed('eth_gasPrice', E);
    billed('eth_blockNumber', E);
    billed('eth_getCode', E);

    // debug_* costs twice (COMPAT multiplier).
    const trace = await rpc(url, {
      jsonrpc: '2.0',
      id: 'trace',
      method: 'debug_traceCall',
      params: [{ to: zero, data: '0x' }, 'latest', {}],
    });
    expect((trace.json as { result?: unknown }).result).toBeDefined();
    billed('debug_traceCall', 2 * E);

    // The node's own error is an answer (billed); gateway refusals and parse errors are not.
    const nodeError = await rpc(url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_getBlockByNumber',
      params: ['not-a-block', false],
    });
    expect((nodeError.json as { error?: { code: number } }).error).toBeDefined();
    billed('eth_getBlockByNumber', E);
    expect(((await rpc(url, '{"jsonrpc":')).json as { error: { code: number } }).error.code).toBe(
      -32700,
    );
    const refused = await rpc(url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_getLogs',
      params: [{ fromBlock: '0x0', toBlock: '0xffff' }],
    });
    expect((refused.json as { error: { code: number } }).error.code).toBe(-32005);
    expect(
      (
        (await rpc(url, { jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }))
          .json as { error: { code: number } }
      ).error.code,
    ).toBe(-32601);

    // Graceful shutdown flushes what is still in memory.
    await gateway.stop();

    const total = [...expected.values()].reduce((s, l) => s + l.cu, 0);
    const totalCalls = [...expected.values()].reduce((s, l) => s + l.calls, 0);
    type Usage = {
      items: { network: string; method: string; calls: number; cu: number }[];
      total_cu: number;
      total_calls: number;
    };
    let usage: Usage | undefined;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      usage = (await call('GET', '/api/v1/account/usage?group_by=method')) as unknown as Usage;
      if (usage.total_cu >= total) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    // Nothing arrives late and nothing twice.
    await new Promise((r) => setTimeout(r, 1_500));
    usage = (await call('GET', '/api/v1/account/usage?group_by=method')) as unknown as Usage;
    expect(usage.total_cu).toBe(total);
    expect(usage.total_calls).toBe(totalCalls);
    const byMethod = Object.fromEntries(
      usage.items.map((i) => [i.method, { calls: i.calls, cu: i.cu }]),
    );
    expect(byMethod).toEqual(Object.fromEntries(expected));
    expect(usage.items.every((i) => i.network === 'eth-mainnet')).toBe(true);
    expect(total).toBe(20 * 12 + 40);

    const balanceAfter = await call('GET', '/api/v1/account/balance');
    expect(Number(balanceBefore['total_cu']) - Number(balanceAfter['total_cu'])).toBe(total);
    expect(Number(balanceBefore['allowance_cu']) - Number(balanceAfter['allowance_cu'])).toBe(
      total,
    );
  }, 90_000);

  it('a team account without a plan is told it has no plan (402, -32040, data.code plan_required), not that its CU are exhausted', async () => {
    const team = await call(
      'POST',
      '/api/v1/admin/accounts',
      { name: 'team without a plan', type: 'team', plan: null },
      OPERATOR_TOKEN,
    );
    const teamKey = (team['api_key'] as { key: string }).key;
    // What billing-ledger says of it: no plan, no CU, so "exhausted" in its balance state.
    expect(await call('GET', '/api/v1/account', undefined, teamKey)).toMatchObject({
      type: 'team',
      plan: null,
      plan_required: true,
      balance: { state: 'exhausted', total_cu: 0 },
    });
    const teamToken = (
      await call('POST', '/api/v1/access-tokens', { network: 'eth-mainnet' }, teamKey)
    )['token'] as string;
    // The first test stopped its gateway (to flush its usage): a gateway of its own.
    const gw = await startGateway(gatewayEnv());
    try {
      await check(gw.url, teamToken);
    } finally {
      await gw.stop();
    }
  }, 60_000);

  async function check(gatewayUrl: string, teamToken: string): Promise<void> {
    const single = await rpc(`${gatewayUrl}/${teamToken}/`, {
      jsonrpc: '2.0',
      id: 3,
      method: 'eth_blockNumber',
      params: [],
    });
    expect(single.status).toBe(402);
    expect(single.json).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: {
        code: -32040,
        message: expect.stringContaining('this account has no plan'),
        data: { code: 'plan_required' },
      },
    });
    expect(single.text).not.toContain('exhausted');
    // The account with a plan on the same gateway still answers as before.
    const paying = await rpc(`${gatewayUrl}/${token}/`, {
      jsonrpc: '2.0',
      id: 4,
      method: 'eth_chainId',
    });
    expect(paying.json).toEqual({ jsonrpc: '2.0', id: 4, result: '0x1' });
  }
});
