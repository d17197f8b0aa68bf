import { Events, KvBuckets, type BalanceStateChanged } from '@meridian/contracts';
import { NatsNamespace, provisionMessaging } from '@meridian/platform-messaging';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Subscription } from '@nats-io/transport-node';
import {
  api,
  BillingHarness,
  eventually,
  nodeFlush,
  nodeUsage,
  OPERATOR_TOKEN,
  type BillingApp,
} from '../testing/billing-harness';
import { LedgerRepository } from '../ledger/ledger.repository';
import { LedgerService } from '../ledger/ledger.service';
import { balanceRow, flushDelivery } from '../testing/fixtures';
import { MARK_BY_TICK_AFTER_MS } from './published-marks';
import { StatePublisher } from './state-publisher.service';

/**
 * Balance-state publishing is coalesced per account (STATE_PUBLISH_DELAY_MS) and off the usage
 * apply path; a charge that flips nothing goes to the KV bucket only, an account's changed facts
 * also as an event. These cases assert on the bucket's puts and the published events (no tick:
 * the harness runs with LEDGER_TICK_MS=0, so only the coalesced publishing can deliver).
 */
describe('billing-ledger balance-state publishing (real Postgres + NATS)', () => {
  const h = new BillingHarness();
  let billing: BillingApp;
  let sub: Subscription;
  let kvSub: Subscription;
  const events: BalanceStateChanged[] = [];
  /** Every put into the balance-state bucket, as the gateways' watchers see them. */
  const puts: BalanceStateChanged[] = [];

  beforeAll(async () => {
    await h.setup();
    billing = await h.start({ STATE_PUBLISH_DELAY_MS: '1000' });
    sub = h.nc.subscribe(
      new NatsNamespace(h.prefix).subject(Events.balanceStateChanged.subjectFilter),
      {
        callback: (_error, msg) => {
          events.push(msg.json<BalanceStateChanged>());
        },
      },
    );
    kvSub = h.nc.subscribe(
      `$KV.${new NatsNamespace(h.prefix).bucket(KvBuckets.balanceState.name)}.>`,
      { callback: (_error, msg) => void puts.push(msg.json<BalanceStateChanged>()) },
    );
  });
  afterAll(async () => {
    sub.unsubscribe();
    kvSub.unsubscribe();
    await h.teardown();
  });

  const version = async (accountId: string): Promise<number> =>
    Number(
      (
        await h.dataSource.query('SELECT version FROM billing.balances WHERE account_id = $1', [
          accountId,
        ])
      )[0].version,
    );

  const markerOf = async (accountId: string): Promise<number> =>
    Number(
      (
        await h.dataSource.query(
          'SELECT published_version FROM billing.balances WHERE account_id = $1',
          [accountId],
        )
      )[0].published_version,
    );

  async function newAccount(name: string): Promise<string> {
    const created = await api<{ account: { id: string } }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      { name, plan: 'starter' },
    );
    expect(created.status).toBe(201);
    return created.body.account.id;
  }

  it('coalesces successive changes of an account into its latest state, in KV within 5 s of the last change', async () => {
    const accountId = await newAccount('coalesced');
    await eventually(
      () => h.kvJson<BalanceStateChanged>(KvBuckets.balanceState.name, accountId),
      5_000,
      'initial state in KV',
    );
    const initial = await version(accountId);

    // Eight changes, each its own commit (waiting for the version to move), in quick succession.
    let expectedCu = 90_000_000;
    for (let i = 1; i <= 8; i += 1) {
      const before = await version(accountId);
      await h.publisher.publish(Events.usageRecorded, nodeUsage(accountId, 100 * i));
      expectedCu -= 100 * i;
      await eventually(
        async () => (await version(accountId)) > before,
        5_000,
        `usage ${i} committed`,
      );
    }
    const final = await version(accountId);
    expect(final).toBe(initial + 8);

    // The rule: the latest state reaches KV within 5 s of the last change.
    const state = await eventually(
      async () => {
        const s = await h.kvJson<BalanceStateChanged>(KvBuckets.balanceState.name, accountId);
        return s && s.version === final ? s : undefined;
      },
      5_000,
      'latest balance state in KV',
    );
    expect(state.allowanceCu).toBe(expectedCu);
    await eventually(
      async () => puts.some((e) => e.accountId === accountId && e.version === final),
      5_000,
      'latest balance state put',
    );

    // Coalesced: fewer states went out than there were changes, and never an older one last.
    const published = puts.filter((e) => e.accountId === accountId && e.version > initial);
    expect(published.length).toBeGreaterThan(0);
    expect(published.length).toBeLessThan(8);
    expect(published.at(-1)!.version).toBe(final);
    // Charges that flipped nothing changed no account fact: no event (the creation had one).
    expect(events.filter((e) => e.accountId === accountId).map((e) => e.version)).toEqual([
      initial,
    ]);

    // The durable marker catches up (ADR 0106): with no usage transaction of the account to
    // carry its mark, the publisher's full pass writes it once it has waited long enough, and
    // the tick's database scan has nothing left to send.
    const publisher = billing.app.get(StatePublisher);
    await publisher.flush();
    expect(await markerOf(accountId)).toBeLessThan(final);
    h.clock.advance(MARK_BY_TICK_AFTER_MS);
    await publisher.flush();
    expect(puts.filter((e) => e.accountId === accountId && e.version === final)).toHaveLength(1);
    await eventually(async () => (await markerOf(accountId)) === final, 5_000, 'marked');
  });

  it('announces a flip: the charge that exhausts an account goes out as an event too, at once', async () => {
    const accountId = await newAccount('flipping');
    await eventually(
      () => h.kvJson<BalanceStateChanged>(KvBuckets.balanceState.name, accountId),
      5_000,
      'initial state in KV',
    );
    await h.publisher.publish(Events.usageRecorded, nodeUsage(accountId, 100_000_000));
    const event = await eventually(
      async () => events.find((e) => e.accountId === accountId && e.state === 'exhausted'),
      5_000,
      'exhausted event',
    );
    expect(event.allowanceCu).toBe(0);
    expect(
      (await h.kvJson<BalanceStateChanged>(KvBuckets.balanceState.name, accountId))?.state,
    ).toBe('exhausted');
  });

  it('does not publish again a state whose marker a usage transaction kept locked: a full pass only marks it', async () => {
    const accountId = await newAccount('locked-marker');
    const marker = () => markerOf(accountId);
    const initial = await version(accountId);
    await eventually(async () => (await marker()) === initial, 5_000, 'initial state marked');
    // A committed change handed to the publisher as usage hands its rows over…
    await h.dataSource.query(
      'UPDATE billing.balances SET version = version + 1 WHERE account_id = $1',
      [accountId],
    );
    const row = (await billing.app.get(LedgerRepository).find(accountId))!;
    // …while the next usage transaction holds the row locked (at a fleet's shape: nearly always).
    const holder = h.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query('SELECT 1 FROM billing.balances WHERE account_id = $1 FOR UPDATE', [
      accountId,
    ]);
    try {
      const publisher = billing.app.get(StatePublisher);
      publisher.changed([row]);
      await eventually(
        async () => puts.some((p) => p.accountId === accountId && p.version === row.version),
        5_000,
        'state put',
      );
      await publisher.flush();
      expect(await marker()).toBe(initial);
      // The full pass found the row behind its marker and did not put or announce it again,
      // also once the mark is due for the publisher to write (the row is still locked).
      h.clock.advance(MARK_BY_TICK_AFTER_MS);
      await publisher.flush();
      expect(await marker()).toBe(initial);
      expect(
        puts.filter((p) => p.accountId === accountId && p.version === row.version),
      ).toHaveLength(1);
      expect(events.filter((e) => e.accountId === accountId && e.version === row.version)).toEqual(
        [],
      );
    } finally {
      await holder.rollbackTransaction();
      await holder.release();
    }
    // Unlocked: the next full pass marks it, still without publishing it again.
    await billing.app.get(StatePublisher).flush();
    expect(await marker()).toBe(row.version);
    expect(puts.filter((p) => p.accountId === accountId && p.version === row.version)).toHaveLength(
      1,
    );
  });

  it("writes a published mark with the account's next usage transaction, not by an update of its own (ADR 0106)", async () => {
    const accountId = await newAccount('carried-mark');
    const ledger = billing.app.get(LedgerService);
    const apply = (cu: number) =>
      ledger.applyFlushes([flushDelivery(nodeFlush([[accountId, cu]]))]);
    await eventually(
      async () => (await markerOf(accountId)) === (await version(accountId)),
      5_000,
      'initial state marked',
    );
    await apply(100);
    const charged = await version(accountId);
    await eventually(
      async () => puts.some((p) => p.accountId === accountId && p.version === charged),
      5_000,
      'charged state put',
    );
    // In KV, not yet marked: no pass writes marks of usage states…
    expect(await markerOf(accountId)).toBeLessThan(charged);
    // …the next usage transaction of the account does, with its balance.
    await apply(100);
    expect(await version(accountId)).toBe(charged + 1);
    expect(await markerOf(accountId)).toBe(charged);
  });

  it('retries a pass NATS refused on its own (no tick runs here): the state arrives once the bucket is back', async () => {
    const jsm = await jetstreamManager(h.nc);
    const stream = `KV_${new NatsNamespace(h.prefix).bucket(KvBuckets.balanceState.name)}`;
    await jsm.streams.delete(stream);
    const accountId = await newAccount('retried');
    // Give the first pass (a local round trip) time to fail on the missing bucket.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(
      Number(
        (
          await h.dataSource.query(
            'SELECT version - published_version AS behind FROM billing.balances WHERE account_id = $1',
            [accountId],
          )
        )[0].behind,
      ),
    ).toBeGreaterThan(0);

    await provisionMessaging(jsm, h.prefix, { buckets: [KvBuckets.balanceState] });
    const state = await eventually(
      () => h.kvJson<BalanceStateChanged>(KvBuckets.balanceState.name, accountId),
      15_000,
      'state in KV after the bucket came back',
    );
    expect(state.accountId).toBe(accountId);
  });

  it('retries a pass larger than one turn of puts whole when NATS refuses them: every state arrives once the bucket is back', async () => {
    const jsm = await jetstreamManager(h.nc);
    const stream = `KV_${new NatsNamespace(h.prefix).bucket(KvBuckets.balanceState.name)}`;
    await jsm.streams.delete(stream);
    // 2,500 usage rows (more than two turns of puts), as a usage commit hands them over.
    const rows = Array.from({ length: 2_500 }, (_, i) =>
      balanceRow({
        accountId: `acc_chunked${String(i).padStart(17, '0')}`,
        allowance: 1_000 - i,
        version: 2,
      }),
    );
    billing.app.get(StatePublisher).changed(rows);
    // Give the first pass (local round trips) time to fail on the missing bucket.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await provisionMessaging(jsm, h.prefix, { buckets: [KvBuckets.balanceState] });
    for (const i of [0, 999, 1_000, 2_499]) {
      const state = await eventually(
        () => h.kvJson<BalanceStateChanged>(KvBuckets.balanceState.name, rows[i]!.accountId),
        15_000,
        `state ${i} in KV after the bucket came back`,
      );
      expect(state.allowanceCu).toBe(1_000 - i);
    }
    const kv = await h.kv(KvBuckets.balanceState.name);
    const keys = new Set<string>();
    for await (const key of await kv.keys()) if (key.startsWith('acc_chunked')) keys.add(key);
    expect(keys.size).toBe(2_500);
  });
});
