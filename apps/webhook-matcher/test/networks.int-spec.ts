import { limitsResponse } from '../src/limits/limits.schemas';
import { address, startMatcherStack, TARGET, type MatcherTestStack } from './support/matcher-app';

jest.setTimeout(120_000);

/**
 * A deployment's chain-indexer follows only its NETWORKS: a webhook on another network would be
 * accepted and never fire, so the matcher, given the same NETWORKS, refuses it.
 */
describe('webhooks only on the networks the deployment indexes (NETWORKS)', () => {
  let s: MatcherTestStack;
  beforeAll(async () => {
    // sui-mainnet is indexed but offers no webhooks: the same value as chain-indexer's.
    s = await startMatcherStack({ NETWORKS: 'polygon-mainnet, eth-mainnet,sui-mainnet' });
  });
  afterAll(() => s?.close());

  const body = (network: string) => ({
    network,
    trigger_type: 'address_activity',
    target_url: TARGET,
    addresses: [address(1)],
  });
  const SERVED = ['eth-mainnet', 'polygon-mainnet'];

  it('creates on an indexed network; another is 400 network_not_indexed naming the served ones', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    expect((await s.call('POST', '/webhooks', key, body('polygon-mainnet'))).status).toBe(201);
    expect((await s.call('POST', '/webhooks', key, body('eth-mainnet'))).status).toBe(201);
    for (const network of ['opbnb-mainnet', 'eth-sepolia']) {
      const refused = await s.call('POST', '/webhooks', key, body(network));
      expect(refused).toEqual({
        status: 400,
        body: {
          error: 'network_not_indexed',
          message:
            `network ${network} is not indexed by this deployment, so its webhooks would never ` +
            'fire; webhooks are served on eth-mainnet, polygon-mainnet',
          location: 'body',
          path: 'body.network',
          networks: SERVED,
          request_id: expect.any(String),
        },
      });
    }
    // Not offered at all stays unsupported_network, whatever NETWORKS holds.
    const sui = await s.call('POST', '/webhooks', key, body('sui-mainnet'));
    expect(sui.body.error).toBe('unsupported_network');
    const unknown = await s.call('POST', '/webhooks', key, body('mars-mainnet'));
    expect(unknown.body).toMatchObject({
      error: 'unsupported_network',
      message: 'unknown network "mars-mainnet"; one of eth-mainnet, polygon-mainnet',
    });
    expect((await s.call('GET', '/webhooks', key)).body.items).toHaveLength(2);
  });

  it('GET /webhooks/limits lists the networks served', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const limits = await s.call('GET', '/webhooks/limits', key);
    expect(limits.status).toBe(200);
    expect(limits.body.networks).toEqual(SERVED);
    expect(limitsResponse.safeParse(limits.body).error).toBeUndefined();
  });

  it('refuses to update a webhook made before its network stopped being indexed; pause and delete still work', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const created = await s.call('POST', '/webhooks', key, body('eth-mainnet'));
    const id = created.body.id as string;
    // As if created while the deployment still indexed opbnb-mainnet.
    await s.dataSource.query(
      `UPDATE webhooks.webhooks SET network = 'opbnb-mainnet', chain = 'opbnb' WHERE id = $1`,
      [id],
    );
    const patched = await s.call('PATCH', `/webhooks/${id}`, key, { name: 'renamed' });
    expect(patched.status).toBe(400);
    expect(patched.body).toMatchObject({ error: 'network_not_indexed', networks: SERVED });
    expect((await s.call('GET', `/webhooks/${id}`, key)).body.name).toBeNull();
    expect((await s.call('POST', `/webhooks/${id}/pause`, key, {})).body.status).toBe('paused');
    expect((await s.call('DELETE', `/webhooks/${id}`, key)).body.status).toBe('deleted');
  });
});

describe('NETWORKS set but empty: no network is indexed', () => {
  let s: MatcherTestStack;
  beforeAll(async () => {
    s = await startMatcherStack({ NETWORKS: '' });
  });
  afterAll(() => s?.close());

  it('refuses every webhook and lists no network', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const refused = await s.call('POST', '/webhooks', key, {
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: TARGET,
      addresses: [address(1)],
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      error: 'network_not_indexed',
      message: expect.stringMatching(/served on none: this deployment indexes no network$/),
      networks: [],
    });
    expect((await s.call('GET', '/webhooks/limits', key)).body.networks).toEqual([]);
  });
});
