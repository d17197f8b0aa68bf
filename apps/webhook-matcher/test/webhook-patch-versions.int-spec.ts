import {
  address,
  startMatcherStack,
  TARGET,
  type Answer,
  type MatcherTestStack,
} from './support/matcher-app';

jest.setTimeout(120_000);

/**
 * README "Webhook versions" (QA: a PATCH that changed nothing wrote a new version, so a
 * colleague's no-op save made everyone else's If-Match fail with 412).
 */
describe('a webhook PATCH that changes nothing keeps the version (real Postgres, NATS)', () => {
  let s: MatcherTestStack;
  beforeAll(async () => {
    s = await startMatcherStack();
  });
  afterAll(() => s?.close());

  it("the QA's no-op PATCHes ({}, the same name, the same network, the same filter) answer 200 with version, ETag and updated_at kept and write no change-feed or history row; a stale If-Match is still 412; a PATCH of one field bumps the version", async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const filters = { address: { dir: 'out', in: [address(1)] } };
    const created = await s.call('POST', '/webhooks', key, {
      name: 'shared',
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: TARGET,
      filters,
    });
    expect([created.status, created.body.error]).toEqual([201, undefined]);
    const id = created.body.id as string;
    // Bring it past version 1, so "kept" is not "reset".
    const renamed = await s.call('PATCH', `/webhooks/${id}`, key, { name: 'team' });
    expect(renamed.body.version).toBe(2);
    const before = await s.call('GET', `/webhooks/${id}`, key);
    const rows = async () =>
      (
        await s.dataSource.query(
          `SELECT (SELECT count(*)::int FROM webhooks.change_log WHERE account_id = $1) AS feed,
                  (SELECT count(*)::int FROM webhooks.status_history WHERE webhook_id = $2) AS history`,
          [accountId, id],
        )
      )[0] as { feed: number; history: number };
    const written = await rows();
    s.clock.advance(60_000);

    const kept = (answer: Answer) => {
      expect(answer.status).toBe(200);
      expect(answer.headers['etag']).toBe('"2"');
      expect(answer.body).toEqual(before.body);
    };
    for (const patch of [
      {},
      { name: 'team' },
      { network: 'eth-mainnet' },
      // jsonb hands the filter back with its keys in another order: still the same filter
      { filters, confirm_depth: before.body.confirm_depth, target_url: TARGET },
    ])
      kept(await s.call('PATCH', `/webhooks/${id}`, key, patch));
    kept(await s.call('PATCH', `/webhooks/${id}`, key, {}, { 'if-match': '"2"' }));
    // If-Match is a precondition, evaluated first: a stale tag is 412 even for a no-op.
    const stale = await s.call('PATCH', `/webhooks/${id}`, key, {}, { 'if-match': '"1"' });
    expect([stale.status, stale.body.error]).toEqual([412, 'version_mismatch']);
    expect(await rows()).toEqual(written);
    kept(await s.call('GET', `/webhooks/${id}`, key));

    // A colleague who read version 2 still saves after the no-ops; a real change bumps it.
    const changed = await s.call(
      'PATCH',
      `/webhooks/${id}`,
      key,
      { confirm_depth: 12 },
      { 'if-match': '"2"' },
    );
    expect([changed.status, changed.headers['etag'], changed.body.version]).toEqual([
      200,
      '"3"',
      3,
    ]);
    expect(changed.body.updated_at).not.toBe(before.body.updated_at);
    expect((await rows()).feed).toBe(written.feed + 1);
  });
});
