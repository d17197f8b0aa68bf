import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { WebhookEventBody } from '@meridian/contracts';
import { FakeDns } from '@meridian/testing';
import { Webhook } from 'standardwebhooks';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  http,
  type Abi,
  type Address,
  type Hex,
} from 'viem';
import { startPrivateStack, type PrivateStack } from './private-stack';
import { waitFor } from './probe';

/**
 * Webhooks end to end on the local stack's own processes (issue 15): chain-indexer following a
 * devnet (anvil), webhook-matcher, delivery-worker and billing-ledger, each a child process
 * started by the stack launcher on a database and NATS namespace of its own; a real HTTP
 * receiver on 127.0.0.1 (the stack allows loopback targets) and the seeded demo account.
 * Everything is asserted through public APIs: what the receiver got, the management API's
 * attempt log and stats, and billing-ledger's account API.
 */
const NETWORK = 'polygon-mainnet';
// anvil's funded, unlocked dev accounts (0, 1 and 2).
const FUNDER: Address = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED: Address = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const FLAKY_WATCHED: Address = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';
const PRIVATE_WATCHED: Address = '0x90f79bf6eb2c4f870365e785982e1f87e07fa4c3';
const OTHER_SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
const CU_PER_ATTEMPT = 25;
/** The spec's wait after a first failed attempt (delivery-schedule of @meridian/webhooks). */
const FIRST_RETRY_MS = 5_000;

// The matcher's test tokens (OpenZeppelin ERC-20, the deployer holds the supply), compiled once.
const tokens = JSON.parse(
  readFileSync(
    join(__dirname, '../../apps/webhook-matcher/test/fixtures/test-tokens.artifact.json'),
    'utf8',
  ),
) as Record<'TestToken20', { abi: Abi; bytecode: Hex }>;

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  payload: WebhookEventBody;
  /** What the receiver answered. */
  status: number;
  at: number;
}

/**
 * The customer's endpoint: records every request; `/flaky` answers 500 to the first request
 * of each message (`webhook-id`, stable across retries) and 200 to the next.
 */
class Receiver {
  readonly requests: Received[] = [];
  private readonly failedOnce = new Set<string>();
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id']);
      let status = 200;
      if (req.url === '/flaky' && !this.failedOnce.has(id)) {
        this.failedOnce.add(id);
        status = 500;
      }
      this.requests.push({
        path: req.url ?? '',
        headers: req.headers,
        body,
        payload: JSON.parse(body) as WebhookEventBody,
        status,
        at: Date.now(),
      });
      res
        .writeHead(status, { 'content-type': 'text/plain' })
        .end(status === 200 ? 'ok' : 'try again');
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  at(path: string): Received[] {
    return this.requests.filter((request) => request.path === path);
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The receiver's own `X-Signature: t=<unix>,v1=<hex>` check, written from COMPAT alone. */
function handWrittenSignatureValid(header: string, body: string, secret: string): boolean {
  const fields = header.split(',').map((part) => {
    const eq = part.indexOf('=');
    return [part.slice(0, eq), part.slice(eq + 1)] as const;
  });
  const t = fields.find(([key]) => key === 't')?.[1];
  if (t === undefined || Math.abs(Date.now() / 1000 - Number(t)) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return fields
    .filter(([key]) => key === 'v1')
    .some(([, hex]) => {
      const got = Buffer.from(hex, 'hex');
      return got.length === expected.length && timingSafeEqual(got, expected);
    });
}

/** The transaction an event is about: a transaction's `hash` or a log's `transactionHash`. */
const txOf = (payload: WebhookEventBody) =>
  (payload.raw['transactionHash'] ?? payload.raw['hash']) as string;

const phaseOf = (payload: WebhookEventBody) =>
  payload.removed ? 'removed' : payload.confirmed ? 'confirmed' : 'unconfirmed';

/**
 * A target name that passes the save-time rule but resolves to a private address: served by a
 * fake DNS server (the internet's DNS cannot be reached here) that the worker asks through
 * DELIVERY_DNS_SERVERS; the send-time check must refuse it.
 */
const privateName = { name: 'hooks.intranet-e2e.com', address: '10.0.0.7' };

describe('webhooks end to end on the local stack (indexer, matcher, worker, billing-ledger, anvil)', () => {
  const receiver = new Receiver();
  const fakeDns = new FakeDns({ [privateName.name]: [privateName.address] });
  let stack: PrivateStack;
  let receiverUrl: string;
  let apiKey: string;
  let devnetUrl: string;
  let balanceBefore: number;

  const fail = (error: unknown): never => {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${stack.tail(80)}`);
  };
  const until = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000) =>
    waitFor(what, async () => check(), timeoutMs, 100).catch(fail);

  async function api<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return JSON.parse(text) as T;
  }
  const webhooksApi = <T>(method: string, path: string, body?: unknown) =>
    api<T>(stack.endpoints.webhooks!, method, path, body);
  const accountApi = <T>(path: string) => api<T>(stack.endpoints.account!, 'GET', path);
  const totalCu = async () => (await accountApi<{ total_cu: number }>('/account/balance')).total_cu;

  async function createWebhook(
    name: string,
    address: Address,
    targetUrl: string,
  ): Promise<{ id: string; secret: string }> {
    return webhooksApi('POST', '/webhooks', {
      name,
      network: NETWORK,
      trigger_type: 'address_activity',
      addresses: [address],
      phases: ['unconfirmed', 'confirmed'],
      confirm_depth: 2,
      target_url: targetUrl,
    });
  }

  interface AttemptView {
    event_id: string;
    phase: string;
    attempt: number;
    outcome: string;
    billed: boolean;
    test: boolean;
    status_code: number | null;
    error_class: string | null;
    error: string | null;
    response_body: string | null;
  }
  async function failedAttempts(webhookId: string): Promise<AttemptView[]> {
    const all: AttemptView[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: AttemptView[]; next_cursor: string | null } = await webhooksApi(
        'GET',
        `/webhooks/${webhookId}/deliveries?limit=200${cursor ? `&cursor=${cursor}` : ''}`,
      );
      all.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor);
    return all;
  }

  const chain = () => ({
    wallet: createWalletClient({ transport: http(devnetUrl) }),
    reader: createPublicClient({ transport: http(devnetUrl), pollingInterval: 100 }),
    test: createTestClient({ mode: 'anvil', transport: http(devnetUrl) }),
  });
  async function transfer(to: Address, value: bigint): Promise<{ hash: Hex; block: bigint }> {
    const { wallet, reader } = chain();
    const hash = await wallet.sendTransaction({ account: FUNDER, to, value, chain: null });
    const receipt = await reader.waitForTransactionReceipt({ hash });
    return { hash, block: receipt.blockNumber };
  }
  const mine = (blocks: number) => chain().test.mine({ blocks });
  async function anvilRpc(method: string, params: unknown[]): Promise<void> {
    const response = await fetch(devnetUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const answer = (await response.json()) as { error?: unknown };
    if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
  }

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    const dnsServer = await fakeDns.start();
    stack = await startPrivateStack({
      name: 'webhooks_e2e',
      apps: ['billing-ledger', 'chain-indexer', 'webhook-matcher', 'delivery-worker'],
      devnets: [NETWORK],
      env: { 'delivery-worker': { DELIVERY_DNS_SERVERS: dnsServer } },
    });
    apiKey = stack.endpoints.demo.apiKey;
    devnetUrl = stack.endpoints.devnets[NETWORK]!;
    // One block per transaction, and no block unless asked (the stack's devnet mines every
    // second): the tests decide when an event is confirmed or reorganised away.
    const { test } = chain();
    await test.setIntervalMining({ interval: 0 });
    await test.setAutomine(true);
    balanceBefore = await totalCu();
  }, 330_000);

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
    await fakeDns.stop();
  }, 60_000);

  it('a native and an ERC-20 transfer touching a watched address: unconfirmed then confirmed, same eventId, signed so standardwebhooks and a hand-written t=,v1= check verify', async () => {
    const hook = await createWebhook('e2e watched', WATCHED, `${receiverUrl}/hook`);
    expect(hook.secret).toMatch(/^whsec_/);

    const { wallet, reader } = chain();
    const deployed = await reader.waitForTransactionReceipt({
      hash: await wallet.deployContract({
        abi: tokens.TestToken20.abi,
        bytecode: tokens.TestToken20.bytecode,
        account: FUNDER,
        chain: null,
      }),
    });
    const token = deployed.contractAddress!;
    const native = await transfer(WATCHED, 0x1000n);
    // Each step waits for what it causes, so the order the receiver sees is the pipeline's.
    await until('the unconfirmed delivery of the native transfer', () =>
      receiver.at('/hook').some((r) => txOf(r.payload) === native.hash),
    );
    const erc20Hash = await wallet.sendTransaction({
      account: FUNDER,
      to: token,
      data: encodeFunctionData({
        abi: tokens.TestToken20.abi,
        functionName: 'transfer',
        args: [WATCHED, 5000n],
      }),
      chain: null,
    });
    await reader.waitForTransactionReceipt({ hash: erc20Hash });
    // The ERC-20 transfer's block is the native transfer's second: that one is confirmed now.
    await until(
      'the ERC-20 unconfirmed and the native confirmed deliveries',
      () => receiver.at('/hook').length >= 3,
    );
    await mine(1);
    await until('the ERC-20 confirmed delivery', () => receiver.at('/hook').length >= 4);

    const got = receiver.at('/hook');
    expect(got).toHaveLength(4);
    for (const request of got) {
      const headers = request.headers as Record<string, string>;
      expect(() => new Webhook(hook.secret).verify(request.body, headers)).not.toThrow();
      expect(handWrittenSignatureValid(headers['x-signature']!, request.body, hook.secret)).toBe(
        true,
      );
      // …and another secret verifies with neither.
      expect(handWrittenSignatureValid(headers['x-signature']!, request.body, OTHER_SECRET)).toBe(
        false,
      );
      expect(() => new Webhook(OTHER_SECRET).verify(request.body, headers)).toThrow();
      expect(request.payload).toMatchObject({
        webhookId: hook.id,
        type: 'address_activity',
        network: NETWORK,
      });
    }
    for (const tx of [native.hash, erc20Hash]) {
      const deliveries = got.filter((request) => txOf(request.payload) === tx);
      expect(deliveries.map((request) => phaseOf(request.payload))).toEqual([
        'unconfirmed',
        'confirmed',
      ]);
      expect(deliveries[1]!.payload.eventId).toBe(deliveries[0]!.payload.eventId);
      // Receivers de-duplicate on eventId + phase: one message id per phase.
      expect(deliveries[0]!.headers['webhook-id']).not.toBe(deliveries[1]!.headers['webhook-id']);
    }
    const erc20 = got.find((request) => txOf(request.payload) === erc20Hash)!;
    expect(erc20.payload.decoded).toEqual({
      standard: 'erc20',
      event: 'Transfer',
      from: FUNDER,
      to: WATCHED,
      value: '0x1388',
    });
    expect(got.find((request) => txOf(request.payload) === native.hash)!.payload.block.number).toBe(
      `0x${native.block.toString(16)}`,
    );
  }, 120_000);

  it('anvil_reorg on the block holding a watched transfer: a removed delivery with the same eventId, never a confirmed one', async () => {
    const seen = receiver.at('/hook').length;
    const orphan = await transfer(WATCHED, 0x2000n);
    await until('the unconfirmed delivery of the doomed transfer', () =>
      receiver.at('/hook').some((request) => txOf(request.payload) === orphan.hash),
    );
    const unconfirmed = receiver.at('/hook').find((r) => txOf(r.payload) === orphan.hash)!;
    expect(phaseOf(unconfirmed.payload)).toBe('unconfirmed');
    const eventId = unconfirmed.payload.eventId;

    // Depth 1: the block with the transfer is replaced by an empty one; the next block builds on it.
    await anvilRpc('anvil_reorg', [1, []]);
    await mine(1);
    const ofOrphan = () => receiver.at('/hook').filter((r) => r.payload.eventId === eventId);
    await until('the removed delivery', () =>
      ofOrphan().some((request) => request.payload.removed),
    );

    // A later transfer confirmed past the orphan's depth: had the orphan been confirmed, the
    // matcher (which reads the chain in order) would have published that first.
    await mine(3);
    const marker = await transfer(WATCHED, 0x3000n);
    await mine(1);
    await until('the confirmed delivery of a later transfer', () =>
      receiver
        .at('/hook')
        .some((r) => txOf(r.payload) === marker.hash && phaseOf(r.payload) === 'confirmed'),
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));

    expect(ofOrphan().map((request) => phaseOf(request.payload))).toEqual([
      'unconfirmed',
      'removed',
    ]);
    const removed = ofOrphan()[1]!;
    expect(removed.payload).toMatchObject({ removed: true, confirmed: false, eventId });
    expect(txOf(removed.payload)).toBe(orphan.hash);
    expect(receiver.requests.length).toBeGreaterThan(seen);
  }, 120_000);

  it('a receiver that fails the first attempt: retried 5 s later with the same message id, both attempts logged and counted', async () => {
    const hook = await createWebhook('e2e flaky', FLAKY_WATCHED, `${receiverUrl}/flaky`);
    await transfer(FLAKY_WATCHED, 0x10n);
    await mine(1);
    await until(
      'both phases delivered after a retry',
      () => receiver.at('/flaky').filter((r) => r.status === 200).length === 2,
      60_000,
    );
    const got = receiver.at('/flaky');
    expect(got).toHaveLength(4);
    for (const phase of ['unconfirmed', 'confirmed']) {
      const attempts = got.filter((r) => phaseOf(r.payload) === phase);
      expect(attempts.map((r) => r.status)).toEqual([500, 200]);
      expect(attempts[1]!.headers['webhook-id']).toBe(attempts[0]!.headers['webhook-id']);
      expect(attempts[1]!.body).toBe(attempts[0]!.body);
      expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(FIRST_RETRY_MS - 100);
      expect(() =>
        new Webhook(hook.secret).verify(attempts[1]!.body, attempts[1]!.headers as never),
      ).not.toThrow();
    }

    const failed = await failedAttempts(hook.id);
    expect(failed).toHaveLength(2);
    for (const row of failed)
      expect(row).toMatchObject({
        attempt: 1,
        outcome: 'failure',
        billed: true,
        status_code: 500,
        error_class: 'http_status',
        response_body: 'try again',
      });
    expect(failed.map((row) => row.phase).sort()).toEqual(['confirmed', 'unconfirmed']);
    await until('stats counting both outcomes', async () => {
      const stats = await webhooksApi<{ delivered_total: number }>(
        'GET',
        `/webhooks/${hook.id}/stats`,
      );
      return stats.delivered_total === 2;
    });
    expect(await webhooksApi('GET', `/webhooks/${hook.id}/stats`)).toMatchObject({
      delivered_total: 2,
      failed_total: 2,
      rate_limited_total: 0,
      last_delivered_at: expect.any(String),
    });
    // The spec's record members, the same counters (one webhook, and in the list).
    expect(await webhooksApi('GET', `/webhooks/${hook.id}`)).toMatchObject({
      stats: { failed_total: 2, rate_limited_total: 0 },
    });
    const listed = await webhooksApi<{ items: { id: string; stats: unknown }[] }>(
      'GET',
      '/webhooks?limit=100',
    );
    expect(listed.items.find((item) => item.id === hook.id)?.stats).toEqual({
      failed_total: 2,
      rate_limited_total: 0,
    });
  }, 90_000);

  it(`a target name resolving to a private address (${privateName.name} → ${privateName.address}) is refused at send time`, async () => {
    const { name, address } = privateName;
    const hook = await createWebhook('e2e private', PRIVATE_WATCHED, `https://${name}/hook`);
    await transfer(PRIVATE_WATCHED, 0x20n);
    let refused: AttemptView | undefined;
    await until('the refused attempt', async () => {
      refused = (await failedAttempts(hook.id))[0];
      return refused !== undefined;
    });
    // Stop its retries before the billing count (pausing drops the queued events unattempted).
    await webhooksApi('POST', `/webhooks/${hook.id}/pause`);
    expect(refused).toMatchObject({ outcome: 'failure', error_class: 'refused_address' });
    expect(refused!.error).toContain(address);
  }, 60_000);

  it('CU billed on the ledger equals 25 × attempts made, exactly (receiver successes + logged failures)', async () => {
    const { items: webhooks } = await webhooksApi<{ items: { id: string }[] }>(
      'GET',
      '/webhooks?limit=200',
    );
    const failures: AttemptView[] = [];
    for (const hook of webhooks) failures.push(...(await failedAttempts(hook.id)));
    // Every logged failure here was an attempt made (none skipped by a breaker or for balance):
    // the receiver's 500s and the refused address.
    expect(failures.every((row) => row.billed && !row.test)).toBe(true);
    const successes = receiver.requests.filter((request) => request.status === 200).length;
    expect(failures.filter((row) => row.error_class !== 'refused_address')).toHaveLength(
      receiver.requests.length - successes,
    );
    const attempts = successes + failures.length;
    // 4 per scenario above: two phases of two transfers; unconfirmed + removed of the orphan and
    // both phases of the later transfer; two phases of the flaky one, each attempted twice.
    expect(attempts).toBeGreaterThanOrEqual(12);

    type Usage = { items: { network: string; method: string; calls: number; cu: number }[] };
    const webhookUsage = async () =>
      (await accountApi<Usage>('/account/usage?group_by=method')).items.find(
        (item) => item.network === 'webhooks',
      );
    await until(
      'the usage of every attempt on the ledger',
      async () => ((await webhookUsage())?.calls ?? 0) >= attempts,
    );
    // Nothing more arrives later (an attempt billed twice would).
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await webhookUsage()).toMatchObject({
      method: 'webhook_delivery',
      calls: attempts,
      cu: CU_PER_ATTEMPT * attempts,
    });
    expect(balanceBefore - (await totalCu())).toBe(CU_PER_ATTEMPT * attempts);
    await stack.assertHealthy();
  }, 90_000);
});
