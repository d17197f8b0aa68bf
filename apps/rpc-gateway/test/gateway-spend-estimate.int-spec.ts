import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import WebSocket from 'ws';
import {
  createTestDatabase,
  startAnvil,
  startFakeSuiUpstream,
  type AnvilInstance,
  type BillingLedgerProcess,
  type FakeSuiUpstream,
  type TestDatabase,
} from '@meridian/testing';
import {
  borApiClientClass,
  provisionNamespace,
  rpc,
  startBillingLedger,
  startGateway,
  type RunningGateway,
} from './gateway-harness';

/**
 * "Parallel batches stop near the allowance" (QA, ADR 0201 amendment "a local estimate of
 * spendable CU"): the REAL billing-ledger's balance state turns `exhausted` only after a usage
 * flush and the ledger's apply, so before the gateway kept its own estimate an Enterprise
 * account of 20,000 CU on network S (100 CU a call) sending 20 batches of 100 at once was
 * served whatever its plan RPS admitted (800 calls, 60,000 CU over) before the first 402. Now each
 * gateway process refuses, as exhausted, what its estimate of the account's spendable CU does
 * not cover. CU are written out from COMPAT (S: 100 a call, E: 20) rather than taken from the
 * library the gateway uses.
 */
const OPERATOR_TOKEN = 'op_gateway_spend_estimate_01234567';
const S = 100;
const E = 20;
const P = 20;

interface Answer {
  id: number | null;
  result?: unknown;
  error?: { code: number };
}

describe('rpc-gateway: a local estimate of spendable CU (real billing-ledger)', () => {
  let db: TestDatabase;
  let nats: Awaited<ReturnType<typeof provisionNamespace>>;
  let anvil: AnvilInstance;
  let sui: FakeSuiUpstream;
  let ledger: BillingLedgerProcess;
  const gateways: RunningGateway[] = [];

  beforeAll(async () => {
    [db, nats, anvil, sui] = await Promise.all([
      createTestDatabase({ prefix: 'gw_spend' }),
      provisionNamespace(),
      startAnvil({ chainId: 1 }),
      startFakeSuiUpstream(),
    ]);
    ledger = await startBillingLedger({
      databaseUrl: db.url,
      nats,
      operatorToken: OPERATOR_TOKEN,
      startTimeoutMs: 240_000,
    });
  }, 300_000);

  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.stop().catch(() => undefined)));
    await ledger?.stop();
    await anvil?.stop();
    await sui?.close();
    await nats?.cleanup().catch(() => undefined);
    await db?.drop().catch(() => undefined);
  });

  /** S lives at the shared endpoint only, E in the regions. */
  const gateway = async (region: 'shared' | 'eu') => {
    const started = await startGateway({
      REGION: region,
      NATS_URL: nats.url,
      NATS_PREFIX: nats.prefix,
      BILLING_GRPC_URL: ledger.grpcTarget,
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [anvil.url] }),
      SUI_UPSTREAM_URLS: sui.url,
      GRPC_ENABLED: 'false',
    });
    gateways.push(started);
    return started;
  };

  /** An Enterprise account of `allowanceCu` CU at `nodeRps` (800) with a token of `network`. */
  const account = async (name: string, allowanceCu: number, network: string, nodeRps = 800) => {
    const created = await ledger.call('POST', '/api/v1/admin/accounts', OPERATOR_TOKEN, {
      name,
      type: 'team',
      plan: 'enterprise',
      contract: { allowance_cu: allowanceCu, node_rps: nodeRps },
    });
    const key = (created['api_key'] as { key: string }).key;
    const token = (await ledger.call('POST', '/api/v1/access-tokens', key, { network }))[
      'token'
    ] as string;
    return { key, token };
  };

  const batchOf = (size: number, method: string, from: number) =>
    Array.from({ length: size }, (_, i) => ({ jsonrpc: '2.0', id: from + i, method, params: [] }));

  /** Waits until billing-ledger has applied `cu` of usage; then its balance. */
  const settled = async (key: string, cu: number) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const usage = await ledger.call('GET', '/api/v1/account/usage', key);
      if (Number(usage['total_cu']) >= cu || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    return ledger.call('GET', '/api/v1/account/balance', key);
  };

  it('20 parallel batches of 100 on a 20,000 CU account (network S): 200 calls served, the rest -32040, no overdraft', async () => {
    const gw = await gateway('shared');
    const { key, token } = await account('parallel batches', 20_000, 'sui-mainnet');
    const url = `${gw.url}/${token}/`;
    // The first sight of the token is the burst's: one resolution, its state comes with it.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, b) =>
        rpc(url, batchOf(100, 'suix_getLatestSuiSystemState', b * 100)),
      ),
    );
    let served = 0;
    let exhausted = 0;
    for (const a of answers)
      for (const call of a.json as Answer[]) {
        if (call.result !== undefined) served++;
        else if (call.error?.code === -32040) exhausted++;
      }
    // 20,000 CU = 200 calls; every other call is refused as exhausted. (Before: 800, the plan's
    // burst of 800 RPS, 60,000 CU beyond the allowance; the rest 429.)
    expect({ served, exhausted }).toEqual({ served: 200, exhausted: 1_800 });
    // Two batches served whole, the others refused whole (402) before they take any plan-RPS
    // token. (A batch the estimate covers in part: call-plan.spec.ts.)
    expect(answers.map((a) => a.status).sort()).toEqual([
      ...Array<number>(2).fill(200),
      ...Array<number>(18).fill(402),
    ]);

    const balance = await settled(key, served * S);
    expect(Number(balance['overdraft_cu'])).toBe(0);
    expect(Number(balance['total_cu'])).toBe(0);
    // And the ledger's state, once it arrives, keeps refusing.
    const after = await rpc(url, batchOf(1, 'suix_getLatestSuiSystemState', 5_000));
    expect(after.status).toBe(402);
  }, 120_000);

  it('two processes: each spends at most what the last state left (bound: processes × remaining)', async () => {
    const second = [gateways[0] ?? (await gateway('shared')), await gateway('shared')];
    const { key, token } = await account('two processes', 20_000, 'sui-mainnet');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, b) =>
        rpc(
          `${second[b % 2]!.url}/${token}/`,
          batchOf(100, 'suix_getLatestSuiSystemState', b * 100),
        ),
      ),
    );
    const served = answers
      .flatMap((a) => a.json as Answer[])
      .filter((call) => call.result !== undefined).length;
    // Each process took a state of 20,000 CU and spends it at most once: ≤ 2 × 200 calls
    // (before: 1,600, each process's own burst of 800).
    expect(served).toBeGreaterThanOrEqual(200);
    expect(served).toBeLessThanOrEqual(400);
    const balance = await settled(key, served * S);
    expect(Number(balance['overdraft_cu'])).toBeLessThanOrEqual(20_000);
  }, 120_000);

  it("gRPC: a method needing more CU than are left is refused saying so, and keeps no plan-RPS token (Free's 20 RPS)", async () => {
    // QA: 1,040 CU left, GetBlockInfoInBatch of 100 blocks (2,000 CU) was told the balance was
    // "exhausted", and its 100 tokens were kept: the next call, 1 s later, "rate limit exceeded".
    const polygon = await startAnvil({ chainId: 137 });
    try {
      await rpc(polygon.url, { jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: ['0x64'] });
      const gw = await startGateway({
        REGION: 'eu',
        NATS_URL: nats.url,
        NATS_PREFIX: nats.prefix,
        BILLING_GRPC_URL: ledger.grpcTarget,
        UPSTREAMS: JSON.stringify({ 'polygon-mainnet': [polygon.url] }),
      });
      gateways.push(gw);
      const { key, token } = await account('grpc whole', 1_040, 'polygon-mainnet', 20);
      const client = new (borApiClientClass())(
        `127.0.0.1:${gw.grpcPort}`,
        credentials.createInsecure(),
      );
      const batch = (end: number) =>
        new Promise<{ error: ServiceError | null; response: unknown }>((resolve) => {
          const md = new Metadata();
          md.set('x-access-token', token);
          client['GetBlockInfoInBatch']!(
            { startBlockNumber: 0, endBlockNumber: end },
            md,
            (error, response) => resolve({ error, response }),
          );
        });
      try {
        const refused = await batch(99);
        expect({
          code: refused.error?.code,
          details: refused.error?.details,
          errorCode: refused.error?.metadata.get('error-code'),
        }).toEqual({
          code: status.RESOURCE_EXHAUSTED,
          details: expect.stringContaining(
            'this request needs 2000 compute units (CU) and the account has 1040 CU left',
          ),
          errorCode: ['cu_insufficient'],
        });
        // At once, the plan's whole second (20 calls, 400 CU) is answered: the refused method
        // took no token (before: RESOURCE_EXHAUSTED "rate limit exceeded" for 5 s).
        const answered = await batch(19);
        expect(answered.error).toBeNull();
        expect((answered.response as { blocks: unknown[] }).blocks).toHaveLength(20);
        const balance = await settled(key, 20 * P);
        expect(Number(balance['overdraft_cu'])).toBe(0);
      } finally {
        client.close();
      }
    } finally {
      await polygon.stop();
    }
  }, 120_000);

  it('WebSocket: batches over a session stop at the estimate and its subscription ends (-32040, 1008) before the ledger says exhausted', async () => {
    const gw = await gateway('eu');
    // 2,000 CU: the subscription (20) and 99 calls.
    const { key, token } = await account('websocket', 2_000, 'eth-mainnet');
    const ws = new WebSocket(`ws://127.0.0.1:${gw.port}/${token}`);
    const messages: (Answer | Answer[])[] = [];
    ws.on('message', (data) => messages.push(JSON.parse(data.toString()) as never));
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }),
    );
    const until = async (done: () => boolean) => {
      const deadline = Date.now() + 10_000;
      while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    };
    await until(() => messages.some((m) => !Array.isArray(m) && m.id === 1));
    expect(messages.find((m) => !Array.isArray(m) && m.id === 1)).toMatchObject({
      result: expect.any(String),
    });

    // Two batches at once: the connection's cap on calls in flight (WS_MAX_CALLS_IN_FLIGHT_PER_
    // CONNECTION, 200, ADR 0203 amendment) answers a third one -32005 while these run.
    for (let b = 0; b < 2; b++) ws.send(JSON.stringify(batchOf(100, 'eth_blockNumber', 100 * b)));
    const code = await Promise.race([
      closed,
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000)),
    ]);
    expect(code).toBe(1008);
    const calls = messages.flatMap((m) => (Array.isArray(m) ? m : []));
    const served = calls.filter((c) => c.result !== undefined).length;
    // The batch that spent the estimate is answered (99 calls and one -32040) before the
    // session ends; the other one was refused whole.
    expect(served).toBe(99);
    expect(calls.filter((c) => c.error?.code === -32040)).toHaveLength(101);
    expect(calls).toHaveLength(200);
    expect(messages.at(-1)).toMatchObject({ id: null, error: { code: -32040 } });
    // All of it was spent (the calls answered after the close included), none beyond.
    const balance = await settled(key, E + 99 * E);
    expect(Number(balance['overdraft_cu'])).toBe(0);
  }, 120_000);
});
