import { Events, deliveryJobId, type DeliveryHealth } from '@meridian/contracts';
import { JetStreamPublisher, NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { startAnvil, testNatsUrl, type AnvilInstance } from '@meridian/testing';
import { deliveriesPage } from '../src/deliveries/deliveries.schemas';
import { ChainFeed, rpc } from './matcher-harness';
import { eventually, startMatcherStack, type MatcherTestStack } from './support/matcher-app';

jest.setTimeout(180_000);

const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const NETWORK = 'eth-mainnet';
const MIN = 60_000;

/**
 * QA M1/M2 (ADR 0433): support traces "my webhook missed events" through the delivery log. Real
 * anvil blocks go through the app in-process (real NATS, Postgres, billing-ledger); a free
 * account (1 event a second, burst 12, on block time) gets 14 transfers in one block, so the
 * last 2 are dropped by the budget. Outcomes are published as delivery-worker publishes them
 * (no event body on a success: the summary comes from the matcher's own record of the event).
 */
describe('delivery log: event summary, filters, rate-limited drops', () => {
  let s: MatcherTestStack;
  let anvil: AnvilInstance;
  let client: NatsClient;
  let publisher: JetStreamPublisher;
  let key: string;
  let accountId: string;
  let webhookId: string;
  let hashes: string[];
  let blockNumber: number;
  const startedAt = new Date();

  const log = async (query: string) => {
    const answer = await s.call('GET', `/webhooks/${webhookId}/deliveries?${query}`, key);
    if (answer.status === 200) expect(deliveriesPage.safeParse(answer.body).error).toBeUndefined();
    return answer;
  };
  const items = async (query: string) => {
    const answer = await log(query);
    expect(answer.status).toBe(200);
    return answer.body.items as Array<Record<string, unknown>>;
  };
  const eventOfTx = async (hash: string): Promise<string> => {
    const rows: { event_id: string }[] = await s.dataSource.query(
      `SELECT event_id FROM webhooks.matching_events
        WHERE webhook_id = $1 AND payload->'raw'->>'hash' = $2`,
      [webhookId, hash],
    );
    return rows[0]!.event_id;
  };
  /** What delivery-worker publishes after an attempt of the event's unconfirmed delivery. */
  const outcome = async (eventId: string, fields: Partial<DeliveryHealth>) => {
    const health: DeliveryHealth = {
      id: `${deliveryJobId(webhookId, eventId, 'unconfirmed')}:1`,
      webhookId,
      accountId,
      eventId,
      phase: 'unconfirmed',
      attempt: 1,
      eventAttempt: 1,
      outcome: 'success',
      billed: true,
      final: true,
      statusCode: 200,
      durationMs: 20,
      at: s.clock.now().toISOString(),
      ...fields,
    };
    await publisher.publish(Events.deliveryHealth, health);
    return health;
  };

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 });
    s = await startMatcherStack({ NETWORKS: NETWORK });
    client = new NatsClient({ url: testNatsUrl(), name: 'delivery-log-search-test' });
    await client.connection();
    publisher = new JetStreamPublisher(client, new NatsNamespace(s.natsPrefix));
    ({ key, accountId } = await s.billing.createAccount({ plan: 'free' }));
    const created = await s.call('POST', '/webhooks', key, {
      network: NETWORK,
      trigger_type: 'address_activity',
      target_url: 'https://hooks.example.com/in',
      addresses: [WATCHED],
      confirm_depth: 2,
      phases: ['unconfirmed', 'confirmed'],
    });
    expect(created.status).toBe(201);
    webhookId = created.body.id as string;
    await rpc(anvil.url, 'evm_setAutomine', [false]);
    hashes = [];
    for (let i = 0; i < 14; i++)
      hashes.push(
        await rpc<string>(anvil.url, 'eth_sendTransaction', [
          { from: DEPLOYER, to: WATCHED, value: `0x${(i + 1).toString(16)}` },
        ]),
      );
    await rpc(anvil.url, 'evm_mine');
    await rpc(anvil.url, 'evm_setAutomine', [true]);
    const feed = new ChainFeed(anvil.url, NETWORK, publisher);
    blockNumber = await feed.head();
    await feed.publishBlock(await feed.block(blockNumber));
    await eventually(async () => {
      const [row]: { n: string }[] = await s.dataSource.query(
        `SELECT count(*) AS n FROM webhooks.matching_events WHERE webhook_id = $1`,
        [webhookId],
      );
      return Number(row?.n) === 14;
    }, 60_000);
  });

  afterAll(async () => {
    await client?.close();
    await s?.close();
    await anvil?.stop();
  });

  it('an event dropped by the events budget leaves rows with its summary, unbilled, and is found by its transaction', async () => {
    const dropped = hashes.slice(12).map((h) => h.toLowerCase());
    const rows = await items('outcome=rate_limited');
    // One row per phase the webhook takes, for each of the 2 dropped events.
    expect(rows).toHaveLength(4);
    for (const row of rows)
      expect(row).toMatchObject({
        outcome: 'rate_limited',
        error_class: 'rate_limited',
        billed: false,
        final: true,
        test: false,
        event_attempt: null,
        status_code: null,
        network: NETWORK,
        block_number: blockNumber,
        addresses: [DEPLOYER, WATCHED].sort(),
      });
    expect(new Set(rows.map((r) => r['tx_hash']))).toEqual(new Set(dropped));
    expect(new Set(rows.map((r) => r['phase']))).toEqual(new Set(['unconfirmed', 'confirmed']));
    // The plain log (failures) lists them too; the counter still counts events, once.
    expect((await items('')).filter((r) => r['outcome'] === 'rate_limited')).toHaveLength(4);
    expect((await s.call('GET', `/webhooks/${webhookId}/stats`, key)).body).toMatchObject({
      rate_limited_total: 2,
    });
    const byTx = await items(`tx_hash=${hashes[13]!.toUpperCase().replace('0X', '0x')}`);
    expect(byTx.map((r) => [r['tx_hash'], r['outcome']])).toEqual([
      [dropped[1], 'rate_limited'],
      [dropped[1], 'rate_limited'],
    ]);
  });

  it('a dropped event is replayed by its event id (both phases, in order), like a given-up one', async () => {
    const eventId = await eventOfTx(hashes[12]!);
    const answer = await s.call(
      'POST',
      `/webhooks/${webhookId}/deliveries/${eventId}/replay`,
      key,
      {},
    );
    expect(answer).toEqual({ status: 202, body: { replayed: 2, event_ids: [eventId] } });
  });

  it('a transaction hash finds its delivery, a success recorded without the event body', async () => {
    const eventId = await eventOfTx(hashes[0]!);
    await outcome(eventId, {});
    await eventually(async () => (await items(`tx_hash=${hashes[0]}`)).length === 1);
    expect(await items(`tx_hash=${hashes[0]}`)).toEqual([
      expect.objectContaining({
        event_id: eventId,
        outcome: 'success',
        billed: true,
        network: NETWORK,
        block_number: blockNumber,
        tx_hash: hashes[0]!.toLowerCase(),
        addresses: [DEPLOYER, WATCHED].sort(),
      }),
    ]);
    // By block, decimal or hex: the success and the drops of that block, every outcome.
    const byBlock = await items(`block_number=${blockNumber}&limit=200`);
    expect(byBlock.map((r) => r['outcome']).sort()).toEqual([
      'rate_limited',
      'rate_limited',
      'rate_limited',
      'rate_limited',
      'success',
    ]);
    expect(await items(`block_number=0x${blockNumber.toString(16)}&limit=200`)).toEqual(byBlock);
    expect(await items(`block_number=${blockNumber + 1}`)).toEqual([]);
    // The plain log stays failures only (COMPAT).
    expect((await items('')).map((r) => r['outcome'])).not.toContain('success');
  });

  it('outcome and time filters: since/until bound the rows, outcome names one or several', async () => {
    s.clock.advance(10 * MIN);
    const t1 = s.clock.now();
    const first = await outcome(await eventOfTx(hashes[1]!), {
      outcome: 'failure',
      final: false,
      statusCode: 500,
      errorClass: 'http_status',
    });
    await eventually(async () => (await items('outcome=failure')).length === 1);
    s.clock.advance(10 * MIN);
    const t2 = s.clock.now();
    const second = await outcome(await eventOfTx(hashes[2]!), {
      outcome: 'failure',
      final: false,
      statusCode: 503,
      errorClass: 'http_status',
    });
    await eventually(async () => (await items('outcome=failure')).length === 2);

    const ids = (rows: Array<Record<string, unknown>>) => rows.map((r) => r['event_id']);
    expect(ids(await items('outcome=failure'))).toEqual([second.eventId, first.eventId]);
    expect(ids(await items(`since=${t2.toISOString()}`))).toEqual([second.eventId]);
    expect(ids(await items(`since=${t1.toISOString()}&until=${t1.toISOString()}`))).toEqual([
      first.eventId,
    ]);
    // The drops happened when the block was matched, before t1.
    const early = await items(`until=${new Date(t1.getTime() - 1).toISOString()}`);
    expect(early.map((r) => r['outcome'])).toEqual(Array(4).fill('rate_limited'));
    expect(ids(await items(`outcome=success&since=${startedAt.toISOString()}`))).toEqual([
      await eventOfTx(hashes[0]!),
    ]);
    // An offset other than Z is the same instant.
    const plusTwo = new Date(t2.getTime() + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    expect(ids(await items(`since=${encodeURIComponent(plusTwo)}`))).toEqual([second.eventId]);
    const both = await items('outcome=failure,rate_limited&limit=200');
    expect(both.map((r) => r['outcome'])).toEqual([
      'failure',
      'failure',
      ...Array(4).fill('rate_limited'),
    ]);
  });

  it.each([
    // Refused by the query's schema: named as platform-http names a query parameter.
    ['outcome=delivered', 'query.outcome'],
    ['outcome=failure,,success', 'query.outcome'],
    ['since=yesterday', 'query.since'],
    ['until=2026-12-02T10:00:00', 'query.until'],
    ['tx_hash=0xabc', 'query.tx_hash'],
    ['block_number=-1', 'query.block_number'],
    ['block_number=0xzz', 'query.block_number'],
    // The controller's own check (deliveries.controller.ts), not the schema's: the same form.
    ['since=2026-12-02T10:00:00Z&until=2026-12-02T09:00:00Z', 'query.since'],
  ])('a bad filter %s answers 400 invalid_query naming %s', async (query, path) => {
    const answer = await log(query);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: 'invalid_query', location: 'query', path });
  });
});
