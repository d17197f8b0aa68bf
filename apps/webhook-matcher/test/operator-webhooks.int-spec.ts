import { webhooksPage } from '../src/webhooks/webhook-response.schemas';
import { address, startMatcherStack, TARGET, type MatcherTestStack } from './support/matcher-app';

jest.setTimeout(120_000);

const OPERATOR_TOKEN = 'matcher-test-operator-token-0123';

/** The operator's read of an account's webhooks (the dashboard's operator page). */
describe('webhook-matcher operator read of an account webhooks (real billing-ledger, Postgres, NATS)', () => {
  let s: MatcherTestStack;
  beforeAll(async () => {
    s = await startMatcherStack({ OPERATOR_TOKEN });
  });
  afterAll(() => s?.close());

  const create = (key: string, name: string) =>
    s.call('POST', '/webhooks', key, {
      name,
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: TARGET,
      addresses: [address(7)],
    });

  it('lists one account webhooks with their labels, newest first in pages, and nothing of another account', async () => {
    const owner = await s.billing.createAccount({ plan: 'starter' });
    const other = await s.billing.createAccount({ plan: 'starter' });
    const first = await create(owner.key, 'first');
    const second = await create(owner.key, 'second');
    await create(other.key, 'not yours');
    expect((await s.call('POST', `/webhooks/${first.body.id}/pause`, owner.key)).status).toBe(200);

    const page1 = await s.call(
      'GET',
      `/admin/accounts/${owner.accountId}/webhooks?limit=1`,
      OPERATOR_TOKEN,
    );
    expect(page1.status).toBe(200);
    expect(page1.body.items).toEqual([
      expect.objectContaining({ id: second.body.id, status: 'active', status_label: 'Active' }),
    ]);
    expect(page1.body.items[0].secret).toBeUndefined();
    expect(webhooksPage.safeParse(page1.body).error).toBeUndefined();
    const page2 = await s.call(
      'GET',
      `/admin/accounts/${owner.accountId}/webhooks?limit=1&cursor=${page1.body.next_cursor}`,
      OPERATOR_TOKEN,
    );
    expect(page2.body).toEqual({
      items: [expect.objectContaining({ id: first.body.id, status_label: 'Paused' })],
      next_cursor: null,
    });
    expect(webhooksPage.safeParse(page2.body).error).toBeUndefined();

    // The same view the owner's key reads.
    const own = await s.call('GET', '/webhooks', owner.key);
    expect([...page1.body.items, ...page2.body.items]).toEqual(own.body.items);

    // An account this service has no webhook of: an empty list, not an error.
    const empty = await s.call(
      'GET',
      '/admin/accounts/acc_000000000000000000000000/webhooks',
      OPERATOR_TOKEN,
    );
    expect(empty.body).toEqual({ items: [], next_cursor: null });
    expect(webhooksPage.safeParse(empty.body).error).toBeUndefined();
  });

  it('refuses API keys (even with every scope), and answers 404 for a malformed account id and 400 for a bad page', async () => {
    const owner = await s.billing.createAccount({ plan: 'starter' });
    const path = `/admin/accounts/${owner.accountId}/webhooks`;
    for (const key of [owner.key, null, 'not-the-operator-token-at-all'])
      expect((await s.call('GET', path, key)).body.error).toBe('unauthorized');
    expect((await s.call('GET', path, owner.key)).status).toBe(401);
    const malformed = await s.call('GET', '/admin/accounts/wh_x/webhooks', OPERATOR_TOKEN);
    expect([malformed.status, malformed.body.error]).toEqual([404, 'not_found']);
    const badPage = await s.call('GET', `${path}?limit=0`, OPERATOR_TOKEN);
    expect([badPage.status, badPage.body.error]).toEqual([400, 'invalid_query']);
  });
});
