import {
  Events,
  KvBuckets,
  ledgerPartitionOf,
  ledgerPartitionToken,
  ledgerUsageConsumers,
  partitionedConsumers,
  partitionOf,
  Subjects,
  type BalanceStateChanged,
  type UsageFlushed,
  type UsageFlushedV2,
} from '@meridian/contracts';
import {
  flushParts,
  NatsNamespace,
  provisionMessaging,
  UsageMeter,
} from '@meridian/platform-messaging';
import type { AppProcess } from '@meridian/testing';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { checkLedger } from '../ledger/ledger-check';
import { LedgerService } from '../ledger/ledger.service';
import { PublishedMarks } from '../state/published-marks';
import { StatePublisher } from '../state/state-publisher.service';
import { flushDelivery } from '../testing/fixtures';
import {
  api,
  BillingHarness,
  bulkAccounts,
  eventually,
  nodeFlush,
  nodeFlushV1,
  OPERATOR_TOKEN,
  TEST_USAGE_CONSUMERS,
  type BillingApp,
} from '../testing/billing-harness';
import { PartitionTakeover } from './partition-takeover.service';
import { UnreadUsageWatch } from './unread-usage.service';

/** Ledger replicas, each applying the usage partitions k with k mod 2 = its index (ADR 0107). */
const PARTITIONS = 2;
/** The usage durables ledger replica i of `count` reads. */
const durablesOf = (partition: number, count = PARTITIONS) =>
  ledgerUsageConsumers({ index: partition, count }).map((c) => c.durable);
const partitionEnv = (partition: number, takeoverMs: number, count = PARTITIONS) => ({
  LEDGER_PARTITION: `${partition}/${count}`,
  LEDGER_TAKEOVER_MS: String(takeoverMs),
});
/** The ledger replica of `count` that applies a part (its accounts', all of one usage partition). */
const replicaOf = (part: UsageFlushedV2, count = PARTITIONS) =>
  ledgerPartitionOf(part.accounts[0]!, count);

describe('billing-ledger partitions (ADR 0105 step 3, ADR 0107; real Postgres + NATS, ledger processes)', () => {
  const h = new BillingHarness();
  let producerRun = 0;

  beforeAll(() => h.setup());
  afterAll(() => h.teardown());

  const newAccounts = async (billing: BillingApp, count: number): Promise<string[]> =>
    (await bulkAccounts(billing.url, count, 'part')).map((a) => a.id);

  /**
   * What three producers publish over `windows` seconds (the real meter and part cutting),
   * routed to the usage partitions, with the CU each account is owed.
   */
  function fleetParts(ids: readonly string[], windows: number, expected: Map<string, number>) {
    producerRun += 1;
    const parts: UsageFlushedV2[] = [];
    for (let w = 0; w < windows; w++)
      for (const producer of ['gw-a', 'gw-b', 'dw-c']) {
        const meter = new UsageMeter();
        ids.forEach((id, i) => {
          const cu = 20 * ((i * 3 + w) % 11) + 20;
          meter.add(id, 'eth-mainnet', 'eth_call', cu, cu / 20);
          expected.set(id, (expected.get(id) ?? 0) + cu);
        });
        const start = new Date(Date.parse('2026-01-05T10:00:00.000Z') + w * 1_000);
        parts.push(
          ...flushParts(
            `${producer}-${producerRun}`,
            start.toISOString(),
            new Date(start.getTime() + 999).toISOString(),
            meter.drain(),
            2 * 1024,
          ),
        );
      }
    return parts;
  }

  async function publishAll(parts: readonly UsageFlushedV2[], harness = h): Promise<void> {
    for (let i = 0; i < parts.length; i += 100)
      await Promise.all(
        parts
          .slice(i, i + 100)
          .map((part) => harness.publisher.publish(Events.usageFlushedV2, part)),
      );
  }

  /** How many of `parts` are applied (their ids claimed), of one ledger replica's or all. */
  async function applied(
    parts: readonly UsageFlushedV2[],
    partition?: number,
    harness = h,
  ): Promise<number> {
    const ids = parts
      .filter((p) => partition === undefined || replicaOf(p) === partition)
      .map((p) => p.id);
    const [{ n }] = await harness.dataSource.query(
      'SELECT count(*) AS n FROM billing.usage_flushes WHERE id = ANY($1::text[])',
      [ids],
    );
    return Number(n);
  }

  /** Every account owed exactly its CU, and the ledger's invariants hold. */
  async function expectCharged(ids: readonly string[], expected: Map<string, number>, harness = h) {
    const rows: Array<{ account_id: string; cu: string }> = await harness.dataSource.query(
      `SELECT account_id, sum(amount_cu) AS cu FROM billing.entries
        WHERE account_id = ANY($1::text[]) AND ledger = 'usage' GROUP BY account_id`,
      [ids],
    );
    expect(new Map(rows.map((r) => [r.account_id, Number(r.cu)]))).toEqual(expected);
    const report = await checkLedger(harness.dataSource, ids);
    expect(report.unbalancedJournals).toEqual([]);
    expect(report.balanceMismatches).toEqual([]);
    expect(report.priorMismatches).toEqual([]);
  }

  const everyDurableDrained = () => h.usageDrained();

  /** Every part applied and every durable drained (waited for), then every account to the CU. */
  async function expectEveryPartOnce(
    parts: readonly UsageFlushedV2[],
    ids: readonly string[],
    expected: Map<string, number>,
    what: string,
    harness = h,
  ) {
    await eventually(
      async () =>
        (await applied(parts, undefined, harness)) === parts.length &&
        (await harness.usageDrained()),
      90_000,
      what,
    );
    await expectCharged(ids, expected, harness);
  }

  /** `count` new accounts, made through an app closed again: only the test's ledger processes consume. */
  async function accountsOnly(count: number): Promise<string[]> {
    const setup = await h.start();
    const ids = await newAccounts(setup, count);
    await setup.app.close();
    return ids;
  }

  it('two ledger replicas apply their partitions apart; one killed -9 mid-flush loses nothing and applies nothing twice, to the CU', async () => {
    const ids = await accountsOnly(40);

    const expected = new Map<string, number>();
    // ~3,000 parts a replica (a producer's window is 8 parts, one per usage partition): a
    // replica is mostly still applying when the test sees its first commit.
    const parts = fleetParts(ids, 250, expected);
    // A producer not yet upgraded: v1 parts, every account, read by replica 0 (unpartitioned).
    const v1: UsageFlushed[] = [];
    for (let w = 0; w < 20; w++) {
      const accounts = ids.map((id) => [id, 40] as const);
      for (const [id, cu] of accounts) expected.set(id, (expected.get(id) ?? 0) + cu);
      v1.push(nodeFlushV1(accounts, 'gw-old'));
    }
    const partitionOfPart = new Map(parts.map((p) => [p.id, replicaOf(p)]));
    const ofPartition = (i: number) => parts.filter((p) => replicaOf(p) === i).length;
    expect(ofPartition(0)).toBeGreaterThan(300);
    expect(ofPartition(1)).toBeGreaterThan(300);

    // Half of the parts are in the stream first, so the processes are busy applying when one
    // dies; the other half comes after the kill, so however late it lands, partition 0 holds
    // parts its replica never saw (on a quiet machine it had applied all of a first batch).
    const half = Math.floor(parts.length / 2);
    await publishAll(parts.slice(0, half));
    for (const part of v1) await h.publisher.publish(Events.usageFlushed, part);

    // No stand-in here: a partition's usage waits for its own replica.
    const [zero, one] = await Promise.all([
      h.ledgerProcess(partitionEnv(0, 0)),
      h.ledgerProcess(partitionEnv(1, 0)),
    ]);
    let zeroAgain: AppProcess | undefined;
    try {
      await eventually(async () => (await applied(parts, 0)) >= 100, 60_000, 'partition 0');
      zero.kill('SIGKILL');
      await zero.exited();
      const atKill = await applied(parts, 0);
      await publishAll(parts.slice(half));
      expect(atKill).toBeLessThan(ofPartition(0));

      // Partition 1 is applied by its own replica while partition 0's is down; partition 0's
      // parts wait in its durable (nobody else reads them).
      await eventually(
        async () =>
          (await applied(parts, 1)) === ofPartition(1) && (await h.usageDrained(durablesOf(1))),
        90_000,
        'partition 1 applied while partition 0 is down',
      );
      expect(await applied(parts, 0)).toBe(atKill);

      zeroAgain = await h.ledgerProcess(partitionEnv(0, 0));
      await eventually(
        async () => (await applied(parts)) === parts.length && (await everyDurableDrained()),
        90_000,
        'every part applied after the restart',
      );

      // To the CU: every part (v1 included) once, none twice.
      await expectCharged(ids, expected);
      const [{ n: v1Applied }] = await h.dataSource.query(
        'SELECT count(*) AS n FROM billing.usage_flushes WHERE id = ANY($1::text[])',
        [v1.map((p) => p.id)],
      );
      expect(Number(v1Applied)).toBe(v1.length);

      // No transaction mixed the partitions' compact parts: each replica applied its own.
      const batches: Array<{ ids: string[] }> = await h.dataSource.query(
        `SELECT array_agg(id) AS ids FROM billing.usage_flushes
          WHERE id = ANY($1::text[]) GROUP BY batch`,
        [parts.map((p) => p.id)],
      );
      expect(batches.length).toBeGreaterThan(2);
      for (const batch of batches)
        expect(new Set(batch.ids.map((id) => partitionOfPart.get(id))).size).toBe(1);
    } finally {
      await Promise.all([zero, one, zeroAgain].map((child) => child?.stop()));
    }
  }, 300_000);

  it('a partition whose replica is killed -9 and stays down is applied by the other replica, to the CU', async () => {
    const ids = await accountsOnly(40);
    const expected = new Map<string, number>();
    const parts = fleetParts(ids, 250, expected);
    // Half before the kill, half after it: however late the kill lands (on a quiet machine the
    // replica had applied every part published before it), partition 1 then holds parts only
    // the stand-in can apply.
    const half = Math.floor(parts.length / 2);
    await publishAll(parts.slice(0, half));

    const [zero, one] = await Promise.all([
      h.ledgerProcess(partitionEnv(0, 1_500)),
      h.ledgerProcess(partitionEnv(1, 1_500)),
    ]);
    try {
      await eventually(async () => (await applied(parts, 1)) >= 50, 60_000, 'partition 1');
      one.kill('SIGKILL');
      await one.exited();
      const atKill = await applied(parts, 1);
      await publishAll(parts.slice(half));
      expect(atKill).toBeLessThan(parts.filter((p) => replicaOf(p) === 1).length);
      expect(parts.slice(half).some((p) => replicaOf(p) === 1)).toBe(true);
      // Partition 0's replica stands in once partition 1's has not answered for 1.5 s (its
      // unacked parts come back after the ack wait).
      await expectEveryPartOnce(parts, ids, expected, 'every part applied with partition 1 down');
    } finally {
      await Promise.all([zero, one].map((child) => child.stop()));
    }
  }, 300_000);

  it('the replica count changes while the producers publish (2 → 3 → 1: a rolling update of billing-ledger alone): every part once, to the CU', async () => {
    const ids = await accountsOnly(40);
    const expected = new Map<string, number>();
    // The producers know nothing of the ledger's replica count: they route by usage partition.
    const parts = fleetParts(ids, 200, expected);
    const cut = [0, 1, 2, 3].map((i) => Math.floor((parts.length * i) / 3));
    const third = (i: number) => parts.slice(cut[i], cut[i + 1]);
    const processes: AppProcess[] = [];
    // No stand-in: only the roll itself brings every usage partition a reader.
    const replica = async (index: number, count: number) => {
      const child = await h.ledgerProcess(partitionEnv(index, 0, count));
      processes.push(child);
      return child;
    };
    try {
      let zero = await replica(0, 2);
      let one = await replica(1, 2);
      await publishAll(third(0));
      await eventually(async () => (await applied(parts)) >= 100, 60_000, 'two replicas apply');

      // 2 → 3 as a StatefulSet rolls: the new pod, then the others from the highest ordinal,
      // each stopped and started again with the new count, while parts keep coming. Meanwhile
      // some usage partitions have two readers (0/2 and 2/3 both read partition 2), some none.
      const second = publishAll(third(1));
      const two = await replica(2, 3);
      await one.stop();
      one = await replica(1, 3);
      await zero.stop();
      zero = await replica(0, 3);
      await second;
      await eventually(
        async () => (await applied(parts.slice(0, cut[2]))) === cut[2],
        90_000,
        'the first two thirds applied by three replicas',
      );

      // 3 → 1: the two highest ordinals go, the last one is restarted as the only replica.
      const last = publishAll(third(2));
      await Promise.all([two.stop(), one.stop()]);
      await zero.stop();
      zero = await replica(0, 1);
      await last;
      await expectEveryPartOnce(parts, ids, expected, 'every part applied by one replica');
    } finally {
      await Promise.all(processes.map((child) => child.stop()));
    }
  }, 300_000);

  it("upgrading from ADR 0105 step 3's layout (durables per replica, producers routing by n = 2) with parts in flight: every part once, to the CU", async () => {
    // The previous release's durables: the declared one narrowed to v1 (as now), and one per
    // replica over u0 / u1.
    const previous = [
      TEST_USAGE_CONSUMERS[0]!,
      ...partitionedConsumers(
        TEST_USAGE_CONSUMERS[0]!,
        2,
        (i) => `billing.usage.flushed.v2.${ledgerPartitionToken(i)}`,
      ),
    ];
    const old = new BillingHarness();
    await old.setup(previous);
    try {
      const setup = await old.start();
      const ids = await newAccounts(setup, 40);
      const expected = new Map<string, number>();
      // Routed as that release did: its accounts' partitionOf(accountId, 2) (a part of one usage
      // partition has one such partition).
      const parts = fleetParts(ids, 20, expected).map((p) => ({
        ...p,
        ledgerPartition: partitionOf(p.accounts[0]!, 2),
      }));
      await publishAll(parts, old);
      // The old replicas applied and acked a third of each durable's parts, and hold five more
      // unacked when the upgrade comes.
      const jsm = await jetstreamManager(old.nc);
      const ns = new NatsNamespace(old.prefix);
      for (const durable of previous.slice(1).map((c) => c.durable)) {
        const consumer = await jetstream(old.nc).consumers.get(
          ns.stream('BILLING'),
          ns.consumer(durable),
        );
        const batch = await consumer.fetch({ max_messages: 40, expires: 5_000 });
        let n = 0;
        for await (const m of batch) {
          n += 1;
          if (n > 35) continue;
          const part = m.json<UsageFlushedV2>();
          await setup.app.get(LedgerService).applyFlushes([flushDelivery(part)]);
          m.ack();
        }
        expect(n).toBe(40);
      }
      await old.nc.flush();
      await setup.app.close();
      expect(await applied(parts, undefined, old)).toBe(70);

      // The upgrade: provisioning creates the usage partitions' durables after the family's
      // floor and deletes the old ones; then the new release's replicas start.
      const report = await provisionMessaging(jsm, old.prefix, {
        streams: [],
        buckets: [],
        consumers: TEST_USAGE_CONSUMERS,
      });
      expect(report.filter((e) => e.action === 'deleted')).toHaveLength(2);
      expect(report.filter((e) => e.action === 'created')).toHaveLength(8);
      const replicas = await Promise.all([
        old.ledgerProcess(partitionEnv(0, 0)),
        old.ledgerProcess(partitionEnv(1, 0)),
      ]);
      try {
        await expectEveryPartOnce(
          parts,
          ids,
          expected,
          'every part applied after the upgrade',
          old,
        );
      } finally {
        await Promise.all(replicas.map((child) => child.stop()));
      }
    } finally {
      await old.teardown();
    }
  }, 120_000);

  it('stands in for a partition whose replica stopped answering, and gives it back when it answers again', async () => {
    // A take-over interval so long that only the test's checks ask.
    const zero = await h.start(partitionEnv(0, 3_600_000));
    let one = await h.start(partitionEnv(1, 3_600_000));
    const takeover = zero.app.get(PartitionTakeover);
    const ids = await newAccounts(zero, 10);
    const asked = async (times: number) => {
      let standing: number[] = [];
      for (let i = 0; i < times; i++) standing = await takeover.check();
      return standing;
    };
    const alive = new NatsNamespace(h.prefix).subject(
      Subjects.control.ledgerPartitionAlive.of(ledgerPartitionToken(1)),
    );
    await eventually(
      () =>
        h.nc.request(alive, undefined, { timeout: 500 }).then(
          () => true,
          () => false,
        ),
      10_000,
      'partition 1 answers',
    );
    expect(await asked(3)).toEqual([]);

    await one.app.close();
    expect(await asked(2)).toEqual([]);
    expect(await asked(1)).toEqual([1]);
    const metrics = await (await fetch(`${zero.url}/metrics`)).text();
    expect(metrics).toMatch(/^billing_usage_partitions_stood_in({[^}]*})? 1$/m);

    // Partition 1's usage is applied here meanwhile.
    const expected = new Map<string, number>();
    const parts = fleetParts(ids, 5, expected).filter((p) => replicaOf(p) === 1);
    expect(parts.length).toBeGreaterThan(0);
    await publishAll(parts);
    await eventually(
      async () => (await applied(parts)) === parts.length && (await everyDurableDrained()),
      30_000,
      'partition 1 applied by partition 0',
    );

    // Back: the first answer ends the stand-in; its usage is its own again.
    one = await h.start(partitionEnv(1, 3_600_000));
    await eventually(async () => (await asked(1)).length === 0, 10_000, 'stand-in released');
    const later = fleetParts(ids, 5, expected).filter((p) => replicaOf(p) === 1);
    await publishAll(later);
    await eventually(
      async () => (await applied(later)) === later.length && (await everyDurableDrained()),
      30_000,
      'partition 1 applied by its own replica',
    );
    const charged = new Map(
      [...expected].filter(([id]) => parts.some((p) => p.accounts.includes(id))),
    );
    await expectCharged([...charged.keys()], charged);
    for (const billing of [zero, one]) await billing.app.close();
  });

  it("a replica's full pass publishes the accounts of its own partition only: another's busy accounts are their replica's (a mark left from applying them is dropped), a change made here for them included", async () => {
    const zero = await h.start(partitionEnv(0, 0));
    const one = await h.start(partitionEnv(1, 0));
    const ids = await newAccounts(zero, 20);
    const account = ids.find((id) => ledgerPartitionOf(id, PARTITIONS) === 1)!;
    const passOf = (billing: BillingApp) => billing.app.get(StatePublisher).flush();
    await passOf(one);
    const puts: BalanceStateChanged[] = [];
    const kv = h.nc.subscribe(
      `$KV.${new NatsNamespace(h.prefix).bucket(KvBuckets.balanceState.name)}.${account}`,
      { callback: (_error, msg) => void puts.push(msg.json<BalanceStateChanged>()) },
    );
    const row = async () => {
      const [r] = await h.dataSource.query(
        'SELECT version, published_version FROM billing.balances WHERE account_id = $1',
        [account],
      );
      return { version: Number(r.version), published: Number(r.published_version) };
    };
    const putSeen = (version: number, what: string) =>
      eventually(async () => puts.at(-1)?.version === version, 5_000, what);
    try {
      // A charge applied by partition 0's replica, as while it stood in for partition 1: it put
      // that version into KV and holds its mark.
      const marks = zero.app.get(PublishedMarks);
      await zero.app.get(LedgerService).applyFlushes([flushDelivery(nodeFlush([[account, 10]]))]);
      await eventually(
        async () => marks.versionOf(account) === (await row()).version,
        5_000,
        'partition 0 put its charge',
      );
      // Two charges applied by partition 1: its marker trails the version by one transaction
      // (ADR 0106), and partition 1 put both versions into KV.
      for (const cu of [20, 40])
        await one.app.get(LedgerService).applyFlushes([flushDelivery(nodeFlush([[account, cu]]))]);
      const charged = await row();
      expect(charged.published).toBeLessThan(charged.version);
      await putSeen(charged.version, 'partition 1 put its latest version');
      const putsBefore = puts.length;

      // Partition 0's pass leaves them to partition 1 (before: it put the account again, with
      // an event, on every tick), and drops its stale mark.
      await passOf(zero);
      await h.nc.flush();
      expect(puts.length).toBe(putsBefore);
      expect(marks.versionOf(account)).toBeUndefined();

      // A plan change made on partition 0's replica goes out from partition 1's pass.
      const changed = await api(
        zero.url,
        'PUT',
        `/api/v1/admin/accounts/${account}/plan`,
        OPERATOR_TOKEN,
        { plan: 'growth' },
      );
      expect(changed.status).toBe(200);
      await passOf(zero);
      await h.nc.flush();
      expect(puts.length).toBe(putsBefore);
      await passOf(one);
      const latest = await row();
      expect(latest.version).toBeGreaterThan(charged.version);
      await putSeen(latest.version, "partition 1's pass put the plan change");
      expect(puts.at(-1)?.planId).toBe('growth');
    } finally {
      kv.unsubscribe();
      for (const billing of [zero, one]) await billing.app.close();
    }
  });

  it('replica 0 reports usage published on a subject no usage durable reads (a producer of another release), while it is recent', async () => {
    h.clock.set(Date.now());
    const zero = await h.start(partitionEnv(0, 0));
    const one = await h.start(partitionEnv(1, 0));
    const watch = zero.app.get(UnreadUsageWatch);
    expect(watch.active).toBe(true);
    expect(one.app.get(UnreadUsageWatch).active).toBe(false);
    expect(await watch.check()).toEqual([]);

    const stray = { ...nodeFlush([['acc_stray', 20]], 'gw-sixteen'), ledgerPartition: 11 };
    await h.publisher.publish(Events.usageFlushedV2, stray);
    expect(await watch.check()).toEqual(['billing.usage.flushed.v2.u11']);
    const metrics = await (await fetch(`${zero.url}/metrics`)).text();
    expect(metrics).toMatch(/^billing_usage_unread_subjects({[^}]*})? 1$/m);
    // Its last message is the subject's age: once it is 10 minutes old it is no longer reported.
    // Set from the real time now, after the publish (advancing the clock set at the start left
    // the message younger than 10 minutes when the two replicas took seconds to start).
    h.clock.set(Date.now() + 10 * 60_000 + 1_000);
    expect(await watch.check()).toEqual([]);
    for (const billing of [zero, one]) await billing.app.close();
  });
});
