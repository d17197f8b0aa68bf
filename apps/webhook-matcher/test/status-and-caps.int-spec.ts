import { Subjects } from '@meridian/contracts';
import { NatsNamespace } from '@meridian/platform-messaging';
import { testNatsUrl } from '@meridian/testing';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { statusLabel, type WebhookStatus } from '@meridian/webhooks';
import { DeliveriesRepository } from '../src/deliveries/deliveries.repository';
import { limitsResponse } from '../src/limits/limits.schemas';
import { webhookResponse } from '../src/webhooks/webhook-response.schemas';
import {
  address,
  eventually,
  startMatcherStack,
  TARGET,
  type MatcherTestStack,
} from './support/matcher-app';

jest.setTimeout(180_000);

const MIN = 60_000;
const addresses = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => address(from + i));

/** API helpers over one stack (each describe below has its own). */
function apiOf(stack: () => MatcherTestStack) {
  const create = (key: string, body: Record<string, unknown> = {}) =>
    stack().call('POST', '/webhooks', key, {
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: TARGET,
      addresses: [address(1)],
      ...body,
    });
  const statusOf = async (key: string, id: string) =>
    (await stack().call('GET', `/webhooks/${id}`, key)).body.status as string;
  const post = (key: string, id: string, action: string) =>
    stack().call('POST', `/webhooks/${id}/${action}`, key);
  const usageOf = async (key: string) =>
    (await stack().call('GET', '/webhooks/limits', key)).body.usage as {
      webhooks: number;
      active_webhooks: number;
      webhooks_status_active: number;
      account_addresses: number;
    };
  /** The account's balance facts as this app last stored them (from billing's events). */
  const storedBalance = async (accountId: string) => {
    const rows: Array<{
      exhausted_since: Date | null;
      pending_top_up_cu: string;
      purchased_cu: string;
    }> = await stack().dataSource.query(
      `SELECT exhausted_since, pending_top_up_cu, purchased_cu FROM webhooks.accounts WHERE account_id = $1`,
      [accountId],
    );
    return rows[0] ?? null;
  };
  /** The no-balance service decision, 30 minutes (fake clock) after billing's exhaustedSince. */
  const pauseForNoBalance = async (accountId: string, id: string) => {
    const since = (await storedBalance(accountId))?.exhausted_since;
    expect(since).toBeInstanceOf(Date);
    stack().clock.set(new Date(since!.getTime() + 30 * MIN));
    expect(await stack().status.applyNoBalance(id, { hasEventsToDeliver: true })).toBe(true);
  };
  /**
   * A real failing run for the auto-pause decision, which reads it under the row locks:
   * `attempts` failed outcomes (receiver 500) at `since`, recorded as the delivery-health
   * consumer records them. Answers the run as a caller would have read it.
   */
  let runs = 0;
  const failingRun = async (
    webhookId: string,
    accountId: string,
    since: Date,
    attempts: number,
  ) => {
    const deliveries = stack().app.get(DeliveriesRepository);
    for (let i = 0; i < attempts; i += 1) {
      runs += 1;
      const eventId = `ev_${runs.toString(16).padStart(32, '0')}`;
      await deliveries.record({
        id: `${webhookId}:${eventId}:unconfirmed:1`,
        webhookId,
        accountId,
        eventId,
        phase: 'unconfirmed',
        attempt: 1,
        outcome: 'failure',
        billed: true,
        final: false,
        statusCode: 500,
        errorClass: 'http_status',
        at: since.toISOString(),
      });
    }
    return { failingSince: since, attemptsSinceFailing: attempts };
  };
  const historyOf = async (id: string) =>
    (await stack().dataSource.query(
      `SELECT to_status, trigger, actor FROM webhooks.status_history WHERE webhook_id = $1 ORDER BY id`,
      [id],
    )) as Array<{ to_status: string; trigger: string; actor: string }>;
  return {
    create,
    statusOf,
    post,
    usageOf,
    storedBalance,
    pauseForNoBalance,
    failingRun,
    historyOf,
  };
}

describe('status machine and plan caps through the API (real billing-ledger plan and balance events)', () => {
  let s: MatcherTestStack;
  beforeAll(async () => {
    s = await startMatcherStack();
  });
  afterAll(() => s?.close());

  const { create, statusOf, post, usageOf, pauseForNoBalance, failingRun, historyOf } = apiOf(
    () => s,
  );

  it('a team without a plan gets 403 plan_required; a node owner without a plan gets the Free limits', async () => {
    const team = await s.billing.createAccount({ type: 'team', plan: null });
    const refused = await create(team.key);
    expect([refused.status, refused.body.error]).toEqual([403, 'plan_required']);
    const limits = await s.call('GET', '/webhooks/limits', team.key);
    expect(limits.body).toMatchObject({ plan_required: true, tier: null, account_type: 'team' });
    expect(limitsResponse.safeParse(limits.body).error).toBeUndefined();
    const owner = await s.billing.createAccount({ type: 'team', plan: null, node_owner: true });
    expect((await create(owner.key)).status).toBe(201);
    const second = await create(owner.key);
    expect([second.status, second.body.error]).toEqual([409, 'cap_active_webhooks_exceeded']);
    const ownerLimits = await s.call('GET', '/webhooks/limits', owner.key);
    expect(ownerLimits.body).toMatchObject({
      plan_required: false,
      caps: { active_webhooks: 1, addresses_per_webhook: 10 },
    });
    expect(limitsResponse.safeParse(ownerLimits.body).error).toBeUndefined();
  });

  it('every cap_ code, counted by the spec rules (lists shared between webhooks count twice)', async () => {
    const free = await s.billing.createAccount({ plan: 'free' });
    const tooMany = await create(free.key, { addresses: addresses(1, 11) });
    expect([tooMany.status, tooMany.body.error]).toEqual([409, 'cap_addresses_exceeded']);
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const inline = await create(key, { addresses: addresses(1, 1_001) });
    expect([inline.status, inline.body.error]).toEqual([409, 'cap_inline_addresses_exceeded']);
    const big = await s.call('POST', '/address-lists', key, {
      name: 'big',
      addresses: addresses(10_000, 60_000),
    });
    expect(big.body.size).toBe(60_000);
    const overList = await s.call('POST', `/address-lists/${big.body.id}/entries`, key, {
      addresses: addresses(100_000, 40_001),
    });
    expect([overList.status, overList.body.error]).toEqual([
      409,
      'cap_addresses_per_list_exceeded',
    ]);
    expect((await s.call('GET', `/address-lists/${big.body.id}`, key)).body.size).toBe(60_000);
    const lists: string[] = [big.body.id];
    for (let i = 1; i < 50; i += 1)
      lists.push((await s.call('POST', '/address-lists', key, { name: `l${i}` })).body.id);
    const fifty1 = await s.call('POST', '/address-lists', key, { name: 'one too many' });
    expect([fifty1.status, fifty1.body.error]).toEqual([409, 'cap_address_lists_exceeded']);
    const refs = await create(key, { addresses: [], list_refs: lists.slice(1, 12) });
    expect([refs.status, refs.body.error]).toEqual([409, 'cap_list_refs_exceeded']);
    // A list twice in one list_refs is refused, not counted once (QA: [t, t, big] was counted
    // 100,001 and 11 references to one list passed the 10-list cap).
    const duplicate = (answer: { status: number; body: Record<string, unknown> }, path: string) =>
      expect([answer.status, answer.body.error, answer.body.location, answer.body.path]).toEqual([
        400,
        'duplicate_list_ref',
        'body',
        path,
      ]);
    const twice = await create(key, {
      addresses: [],
      list_refs: [lists[1], lists[1], big.body.id],
    });
    duplicate(twice, 'body.list_refs[1]');
    expect(twice.body.list_id).toBe(lists[1]);
    duplicate(
      await create(key, { addresses: [], list_refs: Array(11).fill(lists[2]) }),
      'body.list_refs[1]',
    );
    // One list in two leaves is two references, each counted (no de-duplication): 2 × 60,000.
    const twoLeaves = await create(key, {
      addresses: [],
      filters: { address: { dir: 'in', list_refs: [big.body.id] } },
      list_refs: [big.body.id],
    });
    expect([twoLeaves.status, twoLeaves.body.error, twoLeaves.body.requested]).toEqual([
      409,
      'cap_addresses_exceeded',
      120_000,
    ]);
    // Stored, such a webhook counts each reference in usage and for later checks too.
    const small = await s.billing.createAccount({ plan: 'starter' });
    const three = await s.call('POST', '/address-lists', small.key, {
      name: 'three',
      addresses: addresses(1, 3),
    });
    const inAndNot = await create(small.key, {
      addresses: [],
      filters: {
        any: [
          { address: { dir: 'in', list_refs: [three.body.id] } },
          { not: { address: { list_refs: [three.body.id] } } },
        ],
      },
    });
    expect(inAndNot.status).toBe(201);
    expect((await s.call('GET', '/webhooks/limits', small.key)).body.usage).toMatchObject({
      account_addresses: 6,
    });
    const first = await create(key, { addresses: [], list_refs: [big.body.id] });
    expect(first.status).toBe(201);
    const patched = await s.call('PATCH', `/webhooks/${first.body.id}`, key, {
      filters: { not: { address: { list_refs: [lists[4], lists[4]] } } },
    });
    duplicate(patched, 'body.filters.not.address.list_refs[1]');
    expect((await s.call('GET', `/webhooks/${first.body.id}`, key)).body.version).toBe(
      first.body.version,
    );
    // The same 60,000-address list referenced twice counts 120,000 > 100,000 for the account.
    const shared = await create(key, { addresses: [], list_refs: [big.body.id] });
    expect([shared.status, shared.body.error]).toEqual([409, 'cap_account_addresses_exceeded']);
    // 60,000 + 40,000 + 1 inline: over the account's 100,000.
    await s.call('POST', `/address-lists/${lists[1]}/entries`, key, {
      addresses: addresses(200_000, 40_000),
    });
    const sum = await create(key, { addresses: [address(7)], list_refs: [lists[1]] });
    expect([sum.status, sum.body.error]).toEqual([409, 'cap_account_addresses_exceeded']);
    expect((await create(key, { addresses: [], list_refs: [lists[1]] })).status).toBe(201);
    // A change to a list re-checks every webhook that references it.
    const grow = await s.call('POST', `/address-lists/${lists[1]}/entries`, key, {
      addresses: [address(999_999)],
    });
    expect([grow.status, grow.body.error]).toEqual([409, 'cap_account_addresses_exceeded']);
    const limits = await s.call('GET', '/webhooks/limits', key);
    expect(limits.body.usage).toMatchObject({
      account_addresses: 100_000,
      webhooks: 2,
      address_lists: 50,
    });
    const perWebhook = await s.billing.createAccount({
      plan: 'enterprise',
      contract: { addresses_per_webhook: 5, active_webhooks: 2 },
    });
    const overContract = await create(perWebhook.key, { addresses: addresses(1, 6) });
    expect([overContract.status, overContract.body.error]).toEqual([409, 'cap_addresses_exceeded']);
    expect((await create(perWebhook.key)).status).toBe(201);
    expect((await create(perWebhook.key)).status).toBe(201);
    expect((await create(perWebhook.key)).body.error).toBe('cap_active_webhooks_exceeded');
    expect((await s.call('GET', '/webhooks/limits', perWebhook.key)).body.caps).toMatchObject({
      active_webhooks: 2,
      addresses_per_webhook: 5,
    });
  });

  it('every plan limit is a 409 with its cap_ code whatever the route, counted on distinct addresses; only a body over 5 MiB is 413 (QA: 100,001 addresses were 400 malformed_body on POST /address-lists and PUT entries)', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const over = addresses(0x100000, 100_001);
    const expectCap = (answer: { status: number; body: Record<string, unknown> }, code: string) =>
      expect([answer.status, answer.body.error]).toEqual([409, code]);
    const created = await s.call('POST', '/address-lists', key, { name: 'big', addresses: over });
    expectCap(created, 'cap_addresses_per_list_exceeded');
    expect(created.body).toMatchObject({ limit: 100_000, requested: 100_001 });
    expect((await s.call('GET', '/address-lists', key)).body.items).toEqual([]);
    const list = (
      await s.call('POST', '/address-lists', key, { name: 'l', addresses: [address(1)] })
    ).body.id as string;
    const before = (await s.call('GET', `/address-lists/${list}`, key)).body;
    expectCap(
      await s.call('PUT', `/address-lists/${list}/entries`, key, { addresses: over }),
      'cap_addresses_per_list_exceeded',
    );
    expectCap(
      await s.call('POST', `/address-lists/${list}/entries`, key, { addresses: over }),
      'cap_addresses_per_list_exceeded',
    );
    expect((await s.call('GET', `/address-lists/${list}`, key)).body).toEqual(before);
    // Duplicates collapse before the count: 100,001 strings naming 100,000 addresses fit.
    const replaced = await s.call('PUT', `/address-lists/${list}/entries`, key, {
      addresses: [...over.slice(0, 100_000), over[0]],
    });
    expect([replaced.status, replaced.body.size]).toEqual([200, 100_000]);
    // Addresses written directly in a filter: the shorthand, a leaf, and a PATCH.
    const inline = (body: Record<string, unknown>) => create(key, { addresses: [], ...body });
    expectCap(await inline({ addresses: over }), 'cap_inline_addresses_exceeded');
    expectCap(
      await inline({ filters: { address: { dir: 'in', in: over } } }),
      'cap_inline_addresses_exceeded',
    );
    const mine = (await create(key)).body.id as string;
    expectCap(
      await s.call('PATCH', `/webhooks/${mine}`, key, { addresses: over }),
      'cap_inline_addresses_exceeded',
    );
    // Lists per webhook: counted before the lists are looked up, however many are named.
    const ids = (n: number) =>
      Array.from(
        { length: n },
        (_, i) =>
          `al_${[...i.toString(32).padStart(24, '0')].map((c) => 'abcdefghijklmnopqrstuvwxyz234567'[parseInt(c, 32)]).join('')}`,
      );
    expectCap(await inline({ list_refs: ids(11) }), 'cap_list_refs_exceeded');
    expectCap(
      await inline({ filters: { address: { dir: 'any', list_refs: ids(1_001) } } }),
      'cap_list_refs_exceeded',
    );
    expectCap(
      await s.call('PATCH', `/webhooks/${mine}`, key, { list_refs: ids(5_000) }),
      'cap_list_refs_exceeded',
    );
    // Within the caps, a list that is not the account's is still 400 unknown_address_list.
    const unknown = await inline({ list_refs: ids(1) });
    expect([unknown.status, unknown.body.error]).toEqual([400, 'unknown_address_list']);
    // Only the body's size is 413: 120,000 addresses are about 5.4 MB.
    const tooBig = await s.call('POST', '/address-lists', key, {
      name: 'too big',
      addresses: addresses(0x200000, 120_000),
    });
    expect([tooBig.status, tooBig.body.error]).toEqual([413, 'request_too_large']);
    expect((await s.call('GET', `/webhooks/${mine}`, key)).body.version).toBe(1);
  });

  it("billing's test clock route does not exist without TEST_CLOCK_CONTROL (production config)", async () => {
    await expect(s.billing.advanceClock(0)).rejects.toThrow(/ 404 /);
  });

  it('20 parallel creates cannot pass the active-webhook cap together', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const answers = await Promise.all(Array.from({ length: 20 }, () => create(key)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((x) => x === 201)).toHaveLength(10);
    expect(
      answers
        .filter((a) => a.status === 409)
        .every((a) => a.body.error === 'cap_active_webhooks_exceeded'),
    ).toBe(true);
    expect((await s.call('GET', '/webhooks?limit=200', key)).body.items).toHaveLength(10);
  });

  it('owner pause / resume / delete; a deleted webhook frees its slot and answers 404', async () => {
    const { key } = await s.billing.createAccount({ plan: 'free' });
    const hook = await create(key);
    const paused = await post(key, hook.body.id, 'pause');
    expect(paused.body).toMatchObject({ status: 'paused', status_label: 'Paused' });
    expect((await post(key, hook.body.id, 'pause')).body.status).toBe('paused');
    // Paused webhooks still count (rule 1).
    expect((await create(key)).body.error).toBe('cap_active_webhooks_exceeded');
    expect((await post(key, hook.body.id, 'resume')).body.status).toBe('active');
    expect((await s.call('DELETE', `/webhooks/${hook.body.id}`, key)).body.status).toBe('deleted');
    expect((await s.call('GET', `/webhooks/${hook.body.id}`, key)).status).toBe(404);
    expect((await post(key, hook.body.id, 'resume')).status).toBe(404);
    expect((await create(key)).status).toBe(201);
  });

  it('downgrade keeps the newest that fit active and pauses the rest (paused_plan); upgrade resumes them newest first; an owner pause stays', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) ids.push((await create(key, { name: `w${i}` })).body.id);
    await post(key, ids[0]!, 'pause');
    await s.billing.setPlan(accountId, 'free');
    await eventually(async () => (await statusOf(key, ids[2]!)) === 'paused_plan');
    expect(await statusOf(key, ids[3]!)).toBe('active');
    expect(await statusOf(key, ids[1]!)).toBe('paused_plan');
    expect(await statusOf(key, ids[0]!)).toBe('paused');
    expect((await s.call('GET', `/webhooks/${ids[2]}`, key)).body.status_label).toBe(
      'Paused: over plan limits',
    );
    const refused = await post(key, ids[2]!, 'resume');
    expect([refused.status, refused.body.error]).toEqual([409, 'cap_active_webhooks_exceeded']);
    expect(await statusOf(key, ids[2]!)).toBe('paused_plan');
    await s.billing.setPlan(accountId, 'starter');
    await eventually(async () => (await statusOf(key, ids[1]!)) === 'active');
    expect(await statusOf(key, ids[2]!)).toBe('active');
    expect(await statusOf(key, ids[0]!)).toBe('paused');
    const history: Array<{ to_status: string; trigger: string; actor: string }> =
      await s.dataSource.query(
        `SELECT to_status, trigger, actor FROM webhooks.status_history WHERE webhook_id = $1 ORDER BY id`,
        [ids[1]],
      );
    expect(history).toEqual([
      { to_status: 'active', trigger: 'create', actor: 'owner' },
      { to_status: 'paused_plan', trigger: 'plan_change', actor: 'billing' },
      { to_status: 'active', trigger: 'plan_change', actor: 'billing' },
    ]);
  });

  it('a paused_plan webhook resumes once it fits (after the newer one is deleted)', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const older = (await create(key)).body.id;
    const newer = (await create(key)).body.id;
    await s.billing.setPlan(accountId, 'free');
    await eventually(async () => (await statusOf(key, older)) === 'paused_plan');
    // While the newer one holds Free's one slot, the resume would make 2 active webhooks.
    const refused = await post(key, older, 'resume');
    expect([
      refused.status,
      refused.body.error,
      refused.body.limit,
      refused.body.requested,
    ]).toEqual([409, 'cap_active_webhooks_exceeded', 1, 2]);
    await s.call('DELETE', `/webhooks/${newer}`, key);
    expect((await post(key, older, 'resume')).body.status).toBe('active');
  });

  it('one active-webhook count: /limits, a refused create and a refused resume name the same number (QA: 4, 5 and 2)', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) ids.push((await create(key, { name: `c${i}` })).body.id);
    await s.billing.setPlan(accountId, 'free');
    await eventually(async () => (await statusOf(key, ids[0]!)) === 'paused_plan');
    expect(await Promise.all(ids.map((id) => statusOf(key, id)))).toEqual([
      'paused_plan',
      'paused_plan',
      'paused_plan',
      'active',
    ]);
    const limits = await s.call('GET', '/webhooks/limits', key);
    expect([limits.body.caps.active_webhooks, limits.body.usage.active_webhooks]).toEqual([1, 4]);
    const created = await create(key);
    expect([
      created.status,
      created.body.error,
      created.body.limit,
      created.body.requested,
    ]).toEqual([409, 'cap_active_webhooks_exceeded', 1, 5]);
    // Every paused_plan webhook is counted already: the resume names the count /limits shows.
    for (const id of [ids[2]!, ids[0]!]) {
      const refused = await post(key, id, 'resume');
      expect([
        refused.status,
        refused.body.error,
        refused.body.cap,
        refused.body.limit,
        refused.body.requested,
      ]).toEqual([409, 'cap_active_webhooks_exceeded', 'active_webhooks', 1, 4]);
    }
    expect((await usageOf(key)).active_webhooks).toBe(4);
  });

  it('a team whose plan the operator removed: resuming its paused_plan webhook is 403 plan_required (not insufficient_balance), so is growing its filter (PATCH or its list); a rename passes', async () => {
    const team = await s.billing.createAccount({ type: 'team', plan: 'starter' });
    const list = await s.call('POST', '/address-lists', team.key, {
      name: 'watched',
      addresses: [address(10)],
    });
    const spare = await s.call('POST', '/address-lists', team.key, { name: 'spare' });
    const id = (
      await create(team.key, { addresses: [address(1), address(2)], list_refs: [list.body.id] })
    ).body.id;
    await s.billing.setPlan(team.accountId, null);
    await eventually(async () => (await statusOf(team.key, id)) === 'paused_plan');
    const resumed = await post(team.key, id, 'resume');
    expect([resumed.status, resumed.body.error]).toEqual([403, 'plan_required']);
    expect(await statusOf(team.key, id)).toBe('paused_plan');
    // An owner pause over it and a resume from there: the same cause, the same answer.
    expect((await post(team.key, id, 'pause')).body.status).toBe('paused');
    const fromPaused = await post(team.key, id, 'resume');
    expect([fromPaused.status, fromPaused.body.error]).toEqual([403, 'plan_required']);
    const grown = await s.call('PATCH', `/webhooks/${id}`, team.key, {
      addresses: [address(1), address(2), address(3)],
    });
    expect([grown.status, grown.body.error]).toEqual([403, 'plan_required']);
    // Growing it through its list is the same write; a list no webhook uses is not capped.
    const listGrown = await s.call('POST', `/address-lists/${list.body.id}/entries`, team.key, {
      addresses: [address(11)],
    });
    expect([listGrown.status, listGrown.body.error]).toEqual([403, 'plan_required']);
    const spareGrown = await s.call('POST', `/address-lists/${spare.body.id}/entries`, team.key, {
      addresses: [address(11)],
    });
    expect([spareGrown.status, spareGrown.body.added]).toEqual([200, 1]);
    const renamed = await s.call('PATCH', `/webhooks/${id}`, team.key, { name: 'kept' });
    expect([renamed.status, renamed.body.name, renamed.body.status]).toEqual([
      200,
      'kept',
      'paused',
    ]);
  });

  it('paused_auto after 30 minutes of failures with at least 20 attempts (fake clock); owner resume; owner pause over it', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const id = (await create(key)).body.id;
    const now = s.clock.now().getTime();
    expect(
      await s.status.applyDeliveryHealth(id, {
        failingSince: new Date(now - 30 * MIN + 1),
        attemptsSinceFailing: 50,
      }),
    ).toBe(false);
    expect(
      await s.status.applyDeliveryHealth(id, {
        failingSince: new Date(now - 30 * MIN),
        attemptsSinceFailing: 19,
      }),
    ).toBe(false);
    expect(await statusOf(key, id)).toBe('active');
    const run = await failingRun(id, accountId, new Date(now - 30 * MIN), 20);
    expect(await s.status.applyDeliveryHealth(id, run)).toBe(true);
    expect((await s.call('GET', `/webhooks/${id}`, key)).body).toMatchObject({
      status: 'paused_auto',
      status_label: 'Paused automatically',
    });
    expect((await post(key, id, 'resume')).body.status).toBe('active');
    // The resume restarted the run: 30 new minutes of failures after it pause it again.
    const again = await failingRun(id, accountId, s.clock.now(), 30);
    s.clock.advance(40 * MIN);
    expect(await s.status.applyDeliveryHealth(id, again)).toBe(true);
    s.clock.set(new Date(now));
    expect((await post(key, id, 'pause')).body.status).toBe('paused');
    const drops: Array<{ drop_reason: string }> = await s.dataSource.query(
      `SELECT drop_reason FROM webhooks.status_history WHERE webhook_id = $1 AND drop_reason IS NOT NULL ORDER BY id`,
      [id],
    );
    expect(drops.map((d) => d.drop_reason)).toEqual(['auto_paused', 'auto_paused', 'owner_paused']);
  });

  it('paused_no_balance after 30 minutes at zero with events; resume at zero is 409 and changes nothing; a plan change does not resume it; accepted while a top-up clears', async () => {
    // A node owner without a plan has no allowance: its balance is zero from the start.
    const owner = await s.billing.createAccount({ type: 'team', plan: null, node_owner: true });
    const id = (await create(owner.key)).body.id;
    const test = await post(owner.key, id, 'test');
    expect([test.status, test.body.queued]).toEqual([202, true]);
    s.clock.set(new Date(Date.now() + 29 * MIN));
    expect(await s.status.applyNoBalance(id, { hasEventsToDeliver: true })).toBe(false);
    s.clock.set(new Date(Date.now() + 31 * MIN));
    expect(await s.status.applyNoBalance(id, { hasEventsToDeliver: false })).toBe(false);
    expect(await s.status.applyNoBalance(id, { hasEventsToDeliver: true })).toBe(true);
    expect((await s.call('GET', `/webhooks/${id}`, owner.key)).body).toMatchObject({
      status: 'paused_no_balance',
      status_label: 'Paused: out of CU',
    });
    const notActive = await post(owner.key, id, 'test');
    expect([notActive.status, notActive.body.error]).toEqual([409, 'webhook_not_active']);
    const refused = await post(owner.key, id, 'resume');
    expect([refused.status, refused.body.error]).toEqual([409, 'insufficient_balance']);
    const unchanged = await s.call('GET', `/webhooks/${id}`, owner.key);
    expect([unchanged.body.status, unchanged.body.version]).toEqual(['paused_no_balance', 2]);
    await s.billing.setPlan(owner.accountId, 'starter');
    // Billing's plan (or balance) event stored the new plan; the plan event applies it in that
    // same transaction, a balance event right after (README "Billing events").
    await eventually(async () => {
      const rows: Array<{ plan_id: string | null }> = await s.dataSource.query(
        `SELECT plan_id FROM webhooks.accounts WHERE account_id = $1`,
        [owner.accountId],
      );
      return rows[0]?.plan_id === 'starter';
    });
    expect(await statusOf(owner.key, id)).toBe('paused_no_balance');
    await s.billing.setPlan(owner.accountId, null);
    await s.billing.topUp(owner.key, 1_000_000);
    expect((await post(owner.key, id, 'resume')).body.status).toBe('active');
  });

  it('a resume at an empty balance is 409 insufficient_balance from every paused status, not only paused_no_balance (spec endpoint table), and changes nothing; accepted once a top-up is clearing (rule 2)', async () => {
    // A node owner without a plan has no allowance: its balance is zero from the start.
    const owner = await s.billing.createAccount({ type: 'team', plan: null, node_owner: true });
    const paused = (await create(owner.key)).body.id;
    expect((await post(owner.key, paused, 'pause')).body.status).toBe('paused');
    const refusedPaused = await post(owner.key, paused, 'resume');
    expect([refusedPaused.status, refusedPaused.body.error]).toEqual([409, 'insufficient_balance']);
    const afterPaused = (await s.call('GET', `/webhooks/${paused}`, owner.key)).body;
    expect([afterPaused.status, afterPaused.version]).toEqual(['paused', 2]);
    // Free caps (one slot): the paused_auto case takes the slot this one frees.
    expect((await s.call('DELETE', `/webhooks/${paused}`, owner.key)).status).toBe(200);
    const failing = (await create(owner.key)).body.id;
    const now = s.clock.now().getTime();
    const run = await failingRun(failing, owner.accountId, new Date(now - 30 * MIN), 20);
    expect(await s.status.applyDeliveryHealth(failing, run)).toBe(true);
    const refusedAuto = await post(owner.key, failing, 'resume');
    expect([refusedAuto.status, refusedAuto.body.error]).toEqual([409, 'insufficient_balance']);
    expect(await statusOf(owner.key, failing)).toBe('paused_auto');
    expect((await historyOf(failing)).map((h) => h.to_status)).toEqual(['active', 'paused_auto']);
    await s.billing.topUp(owner.key, 1_000_000);
    expect((await post(owner.key, failing, 'resume')).body.status).toBe('active');
  });

  it('an owner pause over paused_plan is an owner pause: the upgrade that resumes paused_plan webhooks leaves it paused', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const [oldest, middle, newest] = [
      (await create(key)).body.id as string,
      (await create(key)).body.id as string,
      (await create(key)).body.id as string,
    ];
    await s.billing.setPlan(accountId, 'free');
    await eventually(async () => (await statusOf(key, middle)) === 'paused_plan');
    expect(await statusOf(key, oldest)).toBe('paused_plan');
    expect((await post(key, oldest, 'pause')).body).toMatchObject({
      status: 'paused',
      status_label: 'Paused',
    });
    await s.billing.setPlan(accountId, 'starter');
    // The upgrade was applied once the other paused_plan webhook is back.
    await eventually(async () => (await statusOf(key, middle)) === 'active');
    expect(await statusOf(key, newest)).toBe('active');
    expect(await statusOf(key, oldest)).toBe('paused');
    expect((await historyOf(oldest)).map((h) => [h.to_status, h.trigger])).toEqual([
      ['active', 'create'],
      ['paused_plan', 'plan_change'],
      ['paused', 'owner_pause'],
    ]);
  });

  it('DELETE from every status (active, paused, paused_auto, paused_plan, paused_no_balance) answers 200 with the deleted webhook and frees its slot in GET /webhooks/limits', async () => {
    const deleteFreesSlot = async (key: string, id: string, status: WebhookStatus) => {
      const got = await s.call('GET', `/webhooks/${id}`, key);
      expect([got.body.status, got.body.status_label]).toEqual([status, statusLabel(status)]);
      expect(webhookResponse.safeParse(got.body).error).toBeUndefined();
      const before = await usageOf(key);
      const deleted = await s.call('DELETE', `/webhooks/${id}`, key);
      expect(webhookResponse.safeParse(deleted.body).error).toBeUndefined();
      expect([status, deleted.status, deleted.body.id, deleted.body.status]).toEqual([
        status,
        200,
        id,
        'deleted',
      ]);
      const after = await usageOf(key);
      // Each webhook here watches one address.
      expect([status, after.webhooks, after.account_addresses]).toEqual([
        status,
        before.webhooks - 1,
        before.account_addresses - 1,
      ]);
      expect((await s.call('GET', `/webhooks/${id}`, key)).status).toBe(404);
    };
    const starter = await s.billing.createAccount({ plan: 'starter' });
    const active = (await create(starter.key)).body.id as string;
    const paused = (await create(starter.key)).body.id as string;
    const auto = (await create(starter.key)).body.id as string;
    await post(starter.key, paused, 'pause');
    const run = await failingRun(
      auto,
      starter.accountId,
      new Date(s.clock.now().getTime() - 30 * MIN),
      20,
    );
    expect(await s.status.applyDeliveryHealth(auto, run)).toBe(true);
    // The usage beside caps.active_webhooks counts what the cap counts: paused ones too (rule 1).
    expect(await usageOf(starter.key)).toMatchObject({
      webhooks: 3,
      active_webhooks: 3,
      webhooks_status_active: 1,
    });
    await deleteFreesSlot(starter.key, active, 'active');
    await deleteFreesSlot(starter.key, paused, 'paused');
    await deleteFreesSlot(starter.key, auto, 'paused_auto');

    const downgraded = await s.billing.createAccount({ plan: 'starter' });
    const overPlan = (await create(downgraded.key)).body.id as string;
    const kept = (await create(downgraded.key)).body.id as string;
    await s.billing.setPlan(downgraded.accountId, 'free');
    await eventually(async () => (await statusOf(downgraded.key, overPlan)) === 'paused_plan');
    expect((await create(downgraded.key)).body.error).toBe('cap_active_webhooks_exceeded');
    await deleteFreesSlot(downgraded.key, overPlan, 'paused_plan');
    expect(await statusOf(downgraded.key, kept)).toBe('active');

    // A node owner without a plan: Free caps (one webhook) and a zero balance.
    const owner = await s.billing.createAccount({ type: 'team', plan: null, node_owner: true });
    const broke = (await create(owner.key)).body.id as string;
    await pauseForNoBalance(owner.accountId, broke);
    expect((await create(owner.key)).body.error).toBe('cap_active_webhooks_exceeded');
    await deleteFreesSlot(owner.key, broke, 'paused_no_balance');
    expect((await create(owner.key)).status).toBe(201);
  });

  it('an upgrade that only partly fits resumes paused_plan webhooks newest first as far as the plan allows (Enterprise contract active_webhooks 2; Free → Starter with 12)', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push((await create(key, { name: `w${i}` })).body.id);
    await s.billing.setPlan(accountId, 'free');
    await eventually(async () => (await statusOf(key, ids[3]!)) === 'paused_plan');
    expect(await Promise.all(ids.map((id) => statusOf(key, id)))).toEqual([
      'paused_plan',
      'paused_plan',
      'paused_plan',
      'paused_plan',
      'active',
    ]);
    await s.billing.setPlan(accountId, 'enterprise', { active_webhooks: 2 });
    await eventually(async () => (await statusOf(key, ids[3]!)) === 'active');
    expect(await Promise.all(ids.map((id) => statusOf(key, id)))).toEqual([
      'paused_plan',
      'paused_plan',
      'paused_plan',
      'active',
      'active',
    ]);
    const refused = await post(key, ids[2]!, 'resume');
    expect([refused.status, refused.body.error]).toEqual([409, 'cap_active_webhooks_exceeded']);

    const growth = await s.billing.createAccount({ plan: 'growth' });
    const twelve: string[] = [];
    for (let i = 0; i < 12; i += 1) twelve.push((await create(growth.key)).body.id);
    await s.billing.setPlan(growth.accountId, 'free');
    await eventually(async () => (await statusOf(growth.key, twelve[10]!)) === 'paused_plan');
    await s.billing.setPlan(growth.accountId, 'starter');
    await eventually(async () => (await statusOf(growth.key, twelve[2]!)) === 'active');
    const after = await Promise.all(twelve.map((id) => statusOf(growth.key, id)));
    // Starter holds 10: the 10 newest are active, the 2 oldest stay paused_plan.
    expect(after).toEqual([...Array(2).fill('paused_plan'), ...Array(10).fill('active')]);
    expect(await usageOf(growth.key)).toMatchObject({
      webhooks: 12,
      active_webhooks: 12,
      webhooks_status_active: 10,
    });
  });

  it('a downgrade over an address cap (not the webhook count) pauses the oldest that no longer fits; its resume names the address cap', async () => {
    // Enterprise keeps 100 webhooks; the contract lowers only the account's addresses to 20.
    const account = await s.billing.createAccount({ plan: 'starter' });
    const big = (await create(account.key, { addresses: addresses(100, 20) })).body.id as string;
    const small = (await create(account.key, { addresses: addresses(200, 5) })).body.id as string;
    const newest = (await create(account.key, { addresses: addresses(300, 10) })).body.id as string;
    await s.billing.setPlan(account.accountId, 'enterprise', { addresses_per_account: 20 });
    await eventually(async () => (await statusOf(account.key, big)) === 'paused_plan');
    expect([await statusOf(account.key, small), await statusOf(account.key, newest)]).toEqual([
      'active',
      'active',
    ]);
    expect((await s.call('GET', '/webhooks/limits', account.key)).body.caps).toMatchObject({
      active_webhooks: 100,
      addresses_per_account: 20,
    });
    const refused = await post(account.key, big, 'resume');
    expect([refused.status, refused.body.error]).toEqual([409, 'cap_account_addresses_exceeded']);
    // The account's addresses as /limits shows them (rule 3: the paused one's 20 count already).
    expect([refused.body.limit, refused.body.requested]).toEqual([20, 35]);

    // The same with the per-webhook cap: 20 addresses over a contract's 15.
    const perWebhook = await s.billing.createAccount({ plan: 'starter' });
    const wide = (await create(perWebhook.key, { addresses: addresses(100, 20) })).body
      .id as string;
    const narrow = (await create(perWebhook.key)).body.id as string;
    await s.billing.setPlan(perWebhook.accountId, 'enterprise', { addresses_per_webhook: 15 });
    await eventually(async () => (await statusOf(perWebhook.key, wide)) === 'paused_plan');
    expect(await statusOf(perWebhook.key, narrow)).toBe('active');
    const tooWide = await post(perWebhook.key, wide, 'resume');
    expect([tooWide.status, tooWide.body.error]).toEqual([409, 'cap_addresses_exceeded']);
    expect([tooWide.body.limit, tooWide.body.requested]).toEqual([15, 20]);
  });

  it('a downgrade keeps, newest first, each webhook that fits in what is left of the caps; one that does not fit takes nothing (QA: Starter → Free with A 5, B 3, C 2, D 20 paused all four)', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const sizes = { A: 5, B: 3, C: 2, D: 20 };
    const ids: Record<string, string> = {};
    let next = 100;
    for (const [name, count] of Object.entries(sizes)) {
      ids[name] = (await create(key, { name, addresses: addresses(next, count) })).body.id;
      next += 100;
    }
    await s.billing.setPlan(accountId, 'free');
    await eventually(async () => (await statusOf(key, ids['A']!)) === 'paused_plan');
    const statuses = async () =>
      Object.fromEntries(
        await Promise.all(
          Object.entries(ids).map(async ([name, id]) => [name, await statusOf(key, id)]),
        ),
      );
    // D (newest) is over Free's 10 addresses per webhook; C is the newest that fits and takes
    // the one slot; B and A find none left (before: D held the slot and C was paused too).
    expect(await statuses()).toEqual({
      A: 'paused_plan',
      B: 'paused_plan',
      C: 'active',
      D: 'paused_plan',
    });
    // /limits and a refused resume still count every non-deleted webhook (rules 1 and 3).
    expect(await usageOf(key)).toMatchObject({
      active_webhooks: 4,
      webhooks_status_active: 1,
      account_addresses: 30,
    });
    const refused = await post(key, ids['B']!, 'resume');
    expect([refused.status, refused.body.error, refused.body.requested]).toEqual([
      409,
      'cap_active_webhooks_exceeded',
      4,
    ]);
    const tooWide = await post(key, ids['D']!, 'resume');
    expect([tooWide.status, tooWide.body.error, tooWide.body.requested]).toEqual([
      409,
      'cap_addresses_exceeded',
      20,
    ]);
  });

  it('one account-address count (rule 3, paused webhooks included) for /limits, a refused create, PATCH, list add and resume; a downgrade keeps an older webhook that fits in what the newer ones left', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const list = (
      await s.call('POST', '/address-lists', key, { name: 'ten', addresses: addresses(300, 10) })
    ).body.id as string;
    const small = (await create(key, { addresses: addresses(200, 5) })).body.id as string;
    const big = (await create(key, { addresses: addresses(100, 20) })).body.id as string;
    const newest = (await create(key, { addresses: [], list_refs: [list] })).body.id as string;
    // The contract lowers only the account's addresses: 35 counted, 20 allowed.
    await s.billing.setPlan(accountId, 'enterprise', { addresses_per_account: 20 });
    await eventually(async () => (await statusOf(key, big)) === 'paused_plan');
    // newest's 10 fit; big's 20 do not (30 > 20) and take nothing; small's 5 fit in what is left.
    expect(await Promise.all([small, big, newest].map((id) => statusOf(key, id)))).toEqual([
      'active',
      'paused_plan',
      'active',
    ]);
    expect(await usageOf(key)).toMatchObject({ account_addresses: 35, webhooks_status_active: 2 });
    const over = (answer: { status: number; body: Record<string, unknown> }, requested: number) =>
      expect([
        answer.status,
        answer.body.error,
        answer.body.cap,
        answer.body.limit,
        answer.body.requested,
      ]).toEqual([409, 'cap_account_addresses_exceeded', 'addresses_per_account', 20, requested]);
    // A resume names the count /limits shows (the paused webhook's addresses are in it already).
    over(await post(key, big, 'resume'), 35);
    // A write that grows the account names what /limits would show after it: 35 + 1.
    over(await create(key, { addresses: [address(900)] }), 36);
    over(await s.call('PATCH', `/webhooks/${newest}`, key, { addresses: [address(900)] }), 36);
    over(
      await s.call('POST', `/address-lists/${list}/entries`, key, { addresses: [address(900)] }),
      36,
    );
    // An owner-paused webhook keeps its place: pausing newest lets big in no more.
    expect((await post(key, newest, 'pause')).body.status).toBe('paused');
    over(await post(key, big, 'resume'), 35);
    // Deleting big lowers the count: 15 ≤ 20.
    await s.call('DELETE', `/webhooks/${big}`, key);
    expect((await post(key, newest, 'resume')).body.status).toBe('active');
    expect(await usageOf(key)).toMatchObject({ account_addresses: 15, webhooks_status_active: 2 });
  });

  it("a record's usage is what the per-webhook caps count: a cap at that count passes, one below refuses naming it (create, GET, list, PATCH, resume; QA: the dashboard counted the filter itself, each list once)", async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const newList = async (name: string, count: number, from: number) =>
      (await s.call('POST', '/address-lists', key, { name, addresses: addresses(from, count) }))
        .body.id as string;
    const seven = await newList('seven', 7, 100);
    const four = await newList('four', 4, 200);
    // Inline: 1 in the shorthand, 2 in an address leaf, 1 contract; `seven` is referenced twice
    // (shorthand and leaf) and counts twice (rules 2 and 3, no de-duplication).
    const created = await create(key, {
      addresses: [address(1)],
      list_refs: [seven],
      filters: {
        any: [
          { address: { in: [address(2), address(3)], list_refs: [seven, four] } },
          { not: { contract: { in: [address(4)] } } },
        ],
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const usage = { addresses: 4 + 7 + 7 + 4, inline_addresses: 4, list_refs: 3 };
    expect(created.body.usage).toEqual(usage);
    expect(
      webhookResponse.safeParse((await s.call('GET', `/webhooks/${id}`, key)).body).error,
    ).toBeUndefined();
    expect((await s.call('GET', `/webhooks/${id}`, key)).body.usage).toEqual(usage);
    const listed = (await s.call('GET', '/webhooks', key)).body.items as Array<{
      id: string;
      usage: unknown;
    }>;
    expect(listed.find((w) => w.id === id)?.usage).toEqual(usage);

    // The per-webhook address cap at exactly the record's count: it fits, the plan change
    // leaves it active, and a PATCH adding one is refused naming count + 1.
    await s.billing.setPlan(accountId, 'enterprise', { addresses_per_webhook: usage.addresses });
    await eventually(
      async () =>
        (await s.call('GET', '/webhooks/limits', key)).body.caps.addresses_per_webhook ===
        usage.addresses,
    );
    expect(await statusOf(key, id)).toBe('active');
    const grown = await s.call('PATCH', `/webhooks/${id}`, key, {
      addresses: [address(1), address(5)],
    });
    expect([grown.status, grown.body.error, grown.body.limit, grown.body.requested]).toEqual([
      409,
      'cap_addresses_exceeded',
      usage.addresses,
      usage.addresses + 1,
    ]);
    // One below it: paused_plan, and its resume is refused naming the record's count.
    await s.billing.setPlan(accountId, 'enterprise', {
      addresses_per_webhook: usage.addresses - 1,
    });
    await eventually(async () => (await statusOf(key, id)) === 'paused_plan');
    const refused = await post(key, id, 'resume');
    expect([
      refused.status,
      refused.body.error,
      refused.body.limit,
      refused.body.requested,
    ]).toEqual([409, 'cap_addresses_exceeded', usage.addresses - 1, usage.addresses]);
    // A PATCH answers the record as changed: one list reference and one address fewer.
    const shrunk = await s.call('PATCH', `/webhooks/${id}`, key, { addresses: [], list_refs: [] });
    expect(shrunk.status).toBe(200);
    expect(shrunk.body.usage).toEqual({ addresses: 3 + 7 + 4, inline_addresses: 3, list_refs: 2 });
    expect((await post(key, id, 'resume')).body.status).toBe('active');

    // list_refs counts every reference, as its cap does: 10 references to one list fit the
    // every-plan cap of 10, an 11th is refused naming 11.
    const one = await newList('one', 1, 300);
    const leaves = (n: number) => ({
      any: Array.from({ length: n }, () => ({ address: { in: [], list_refs: [one] } })),
    });
    const ten = await create(key, { addresses: [], filters: leaves(10) });
    expect(ten.status).toBe(201);
    expect(ten.body.usage).toEqual({ addresses: 10, inline_addresses: 0, list_refs: 10 });
    const eleven = await s.call('PATCH', `/webhooks/${ten.body.id}`, key, { filters: leaves(11) });
    expect([eleven.status, eleven.body.error, eleven.body.limit, eleven.body.requested]).toEqual([
      409,
      'cap_list_refs_exceeded',
      10,
      11,
    ]);
  });
});

describe('balance over billing time (billing-ledger with TEST_CLOCK_CONTROL: top-ups clear and the 07:30 UTC reset happens without waiting)', () => {
  let s: MatcherTestStack;
  beforeAll(async () => {
    s = await startMatcherStack({}, { TEST_CLOCK_CONTROL: 'true' });
  });
  afterAll(() => s?.close());

  const { create, statusOf, post, storedBalance, pauseForNoBalance, historyOf } = apiOf(() => s);
  /** billing's default TOPUP_CLEARING_MS (the harness leaves it as production has it). */
  const CLEARING_MS = 90_000;
  /** Spends `cu` of the account the way rpc-gateway does: a usage event billing applies. */
  const spend = async (accountId: string, cu: number) => {
    const nc = await connect({ servers: testNatsUrl() });
    try {
      const billingNow = await s.billing.advanceClock(0);
      const usage = {
        id: `h4-test:${accountId}:${billingNow.toISOString()}`,
        kind: 'node',
        producerId: 'h4-test',
        accountId,
        windowStart: new Date(billingNow.getTime() - 1_000).toISOString(),
        windowEnd: billingNow.toISOString(),
        items: [{ network: 'eth-mainnet', method: 'eth_call', calls: cu / 20, cu }],
        totalCu: cu,
      };
      const subject = new NatsNamespace(s.natsPrefix).subject(Subjects.billing.usage.of(accountId));
      await jetstream(nc).publish(subject, JSON.stringify(usage), { msgID: usage.id });
    } finally {
      await nc.close();
    }
  };

  it('nothing resumes paused_no_balance automatically: after a top-up has cleared (and its balance event was applied) it stays paused_no_balance, and an owner pause over it stays paused; the owner resume then works', async () => {
    const left = await s.billing.createAccount({ type: 'team', plan: null, node_owner: true });
    const pausedOver = await s.billing.createAccount({
      type: 'team',
      plan: null,
      node_owner: true,
    });
    const waiting = (await create(left.key)).body.id as string;
    const owned = (await create(pausedOver.key)).body.id as string;
    await pauseForNoBalance(left.accountId, waiting);
    await pauseForNoBalance(pausedOver.accountId, owned);
    expect((await post(pausedOver.key, owned, 'pause')).body.status).toBe('paused');
    await s.billing.topUp(left.key, 1_000_000);
    await s.billing.topUp(pausedOver.key, 1_000_000);
    await s.billing.advanceClock(CLEARING_MS + 1_000);
    // The signal: billing's balance event of the cleared top-up reached this app (balance ok,
    // nothing pending) for both accounts.
    await eventually(async () => {
      const balances = await Promise.all([
        storedBalance(left.accountId),
        storedBalance(pausedOver.accountId),
      ]);
      return balances.every((b) => b?.exhausted_since === null && b.pending_top_up_cu === '0');
    }, 20_000);
    expect((await s.call('GET', `/webhooks/${waiting}`, left.key)).body).toMatchObject({
      status: 'paused_no_balance',
      version: 2,
    });
    expect(await statusOf(pausedOver.key, owned)).toBe('paused');
    expect((await historyOf(waiting)).map((h) => h.trigger)).toEqual(['create', 'no_balance']);
    expect((await post(left.key, waiting, 'resume')).body.status).toBe('active');
  });

  it('Free daily exhaustion: the allowance spent (node usage through billing) → paused_no_balance after 30 minutes; resume before the 07:30 UTC top-up is 409, after it the owner resume succeeds', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'free' });
    const id = (await create(key)).body.id as string;
    // Spend the whole daily allowance.
    await spend(accountId, 50_000);
    await eventually(async () => (await storedBalance(accountId))?.exhausted_since != null, 20_000);
    await pauseForNoBalance(accountId, id);
    const refused = await post(key, id, 'resume');
    expect([refused.status, refused.body.error]).toEqual([409, 'insufficient_balance']);
    expect(await statusOf(key, id)).toBe('paused_no_balance');
    // Move billing to just after the next 07:30 UTC; the answer comes after its reset pass.
    const billingNow = await s.billing.advanceClock(0);
    const reset = new Date(billingNow);
    reset.setUTCHours(7, 30, 0, 0);
    if (reset.getTime() <= billingNow.getTime()) reset.setUTCDate(reset.getUTCDate() + 1);
    await s.billing.advanceClock(reset.getTime() - billingNow.getTime() + 5_000);
    // Nothing resumed it by itself once the reset's balance event arrived.
    await eventually(
      async () => (await storedBalance(accountId))?.exhausted_since === null,
      20_000,
    );
    expect(await statusOf(key, id)).toBe('paused_no_balance');
    const resumed = await post(key, id, 'resume');
    expect([resumed.status, resumed.body.status]).toEqual([200, 'active']);
    expect((await historyOf(id)).map((h) => [h.to_status, h.trigger, h.actor])).toEqual([
      ['active', 'create', 'owner'],
      ['paused_no_balance', 'no_balance', 'service'],
      ['active', 'owner_resume', 'owner'],
    ]);
  });

  it('a resume while a top-up clears is accepted only when the top-up leaves CU to spend (QA: 100 CU pending over a 970,000 CU overdraft was accepted, and the balance stayed 0 after it cleared)', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'free' });
    const id = (await create(key)).body.id as string;
    expect((await post(key, id, 'pause')).body.status).toBe('paused');
    // The daily 50,000 and 970,000 more (usage in flight at exhaustion): an overdraft.
    await spend(accountId, 1_020_000);
    await eventually(
      async () => (await storedBalance(accountId))?.purchased_cu === '-970000',
      20_000,
    );
    await s.billing.topUp(key, 100);
    const refused = await post(key, id, 'resume');
    expect([refused.status, refused.body.error]).toEqual([409, 'insufficient_balance']);
    expect(await statusOf(key, id)).toBe('paused');
    // Enough to pay the debt and leave 100 CU: accepted while it clears (rule 2).
    await s.billing.topUp(key, 970_000);
    const resumed = await post(key, id, 'resume');
    expect([resumed.status, resumed.body.status]).toEqual([200, 'active']);
  });
});
