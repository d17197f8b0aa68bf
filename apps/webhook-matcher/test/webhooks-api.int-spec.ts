import { KvBuckets, WebhookStatusEntrySchema } from '@meridian/contracts';
import { requestFingerprint } from '@meridian/platform-http';
import { NatsNamespace } from '@meridian/platform-messaging';
import { testNatsUrl } from '@meridian/testing';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import {
  addressListResponse,
  addressListsPage,
  entriesChangeResponse,
  entriesPage,
} from '../src/address-lists/address-list-response.schemas';
import { limitsResponse } from '../src/limits/limits.schemas';
import { StatusPublisher } from '../src/status/status-publisher.service';
import {
  createdWebhookResponse,
  rotatedWebhookResponse,
  testDeliveryResponse,
  webhookResponse,
  webhooksPage,
} from '../src/webhooks/webhook-response.schemas';
import { undeclaredBodies } from './support/declared-bodies';
import {
  address,
  eventually,
  startMatcherStack,
  TARGET,
  type MatcherTestStack,
} from './support/matcher-app';

jest.setTimeout(120_000);

describe('webhook management API (real billing-ledger, Postgres, NATS)', () => {
  let s: MatcherTestStack;
  beforeAll(async () => {
    s = await startMatcherStack();
  });
  afterAll(() => s?.close());

  const create = (
    key: string,
    body: Record<string, unknown> = {},
    headers?: Record<string, string>,
  ) =>
    s.call(
      'POST',
      '/webhooks',
      key,
      {
        network: 'eth-mainnet',
        trigger_type: 'address_activity',
        target_url: TARGET,
        addresses: [address(1)],
        ...body,
      },
      headers,
    );

  it('creates a webhook with a whsec_ secret shown once, lists newest first with cursors, reads, patches', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const first = await create(key, { name: 'one', addresses: ['0x' + 'AB'.repeat(20)] });
    expect(first.status).toBe(201);
    expect(first.body.secret).toMatch(/^whsec_/);
    expect(first.body).toMatchObject({
      status: 'active',
      status_label: 'Active',
      chain: 'ethereum',
      confirm_depth: 96,
      phases: ['unconfirmed', 'confirmed'],
      version: 1,
    });
    expect(first.body.addresses).toEqual(['0x' + 'ab'.repeat(20)]);
    expect(createdWebhookResponse.safeParse(first.body).error).toBeUndefined();
    const second = await create(key, { name: 'two' });
    const third = await create(key, { name: 'three' });
    const page1 = await s.call('GET', '/webhooks?limit=2', key);
    expect(page1.body.items.map((w: { name: string }) => w.name)).toEqual(['three', 'two']);
    expect(page1.body.items[0].secret).toBeUndefined();
    expect(webhooksPage.safeParse(page1.body).error).toBeUndefined();
    const page2 = await s.call('GET', `/webhooks?limit=2&cursor=${page1.body.next_cursor}`, key);
    expect(page2.body).toMatchObject({ next_cursor: null });
    expect(webhooksPage.safeParse(page2.body).error).toBeUndefined();
    expect(page2.body.items.map((w: { name: string }) => w.name)).toEqual(['one']);
    const got = await s.call('GET', `/webhooks/${second.body.id}`, key);
    expect(got.body.name).toBe('two');
    expect(webhookResponse.safeParse(got.body).error).toBeUndefined();
    const patched = await s.call('PATCH', `/webhooks/${third.body.id}`, key, {
      name: 'renamed',
      confirm_depth: 12,
      network: 'eth-mainnet',
    });
    expect(patched.body).toMatchObject({ name: 'renamed', confirm_depth: 12, version: 2 });
    expect(webhookResponse.safeParse(patched.body).error).toBeUndefined();
    for (const field of [
      { network: 'polygon-mainnet' },
      { trigger_type: 'log_event' },
      { chain: 'polygon' },
    ]) {
      const refused = await s.call('PATCH', `/webhooks/${third.body.id}`, key, field);
      expect([refused.status, refused.body.error]).toEqual([400, 'immutable_field']);
      // Located in the house form, as a refusal of the body's schema is.
      expect([refused.body.location, refused.body.path]).toEqual([
        'body',
        `body.${Object.keys(field)[0]}`,
      ]);
    }
  });

  it('answers bad input with a 4xx naming the problem, and writes nothing', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const cases: Array<[Record<string, unknown> | string, number, string, string?]> = [
      [{ bogus: 1 }, 400, 'malformed_body'],
      [{ addresses: ['0x123'] }, 400, 'invalid_address', 'body.addresses[0]'],
      [
        { addresses: [], filters: { any: [{ address: { in: [address(1), 'nope'] } }] } },
        400,
        'invalid_address',
        'body.filters.any[0].address.in[1]',
      ],
      [{ target_url: 'http://hooks.example.com/' }, 400, 'target_url_not_https', 'body.target_url'],
      [{ target_url: 'https://10.1.2.3/' }, 400, 'target_url_private_address'],
      [{ target_url: 'https://0x0a.1.2.3/' }, 400, 'target_url_private_address'],
      [{ target_url: 'https://[::ffff:192.168.0.1]/' }, 400, 'target_url_private_address'],
      [{ target_url: 'https://u:p@hooks.example.com/' }, 400, 'target_url_userinfo'],
      [{ target_url: 'https://hooks.example.com/#x' }, 400, 'target_url_fragment'],
      [{ target_url: 'https://svc.internal/' }, 400, 'target_url_reserved_name'],
      [{ target_url: 'https://a.com:0/' }, 400, 'target_url_invalid'],
      [{ target_url: 'https://a.com:99999/' }, 400, 'target_url_invalid'],
      [{ network: 'sui-mainnet' }, 400, 'unsupported_network', 'body.network'],
      // A body or query its schema refuses is named with its part (platform-http), and so is
      // what the matcher's own rules refuse (above): one form, `location` and `path`.
      [{ confirm_depth: 1 }, 400, 'malformed_body', 'body.confirm_depth'],
      [{ confirm_depth: 97 }, 400, 'malformed_body'],
      [{ phases: ['removed'] }, 400, 'malformed_body'],
      [{ list_refs: ['al_' + 'a'.repeat(24)] }, 400, 'unknown_address_list', 'body.list_refs'],
      ['{"network":', 400, 'malformed_body'],
    ];
    for (const [body, status, code, path] of cases) {
      const answer =
        typeof body === 'string'
          ? await s.call('POST', '/webhooks', key, body)
          : await create(key, body);
      expect([answer.status, answer.body.error, path ? `body ${path}` : null]).toEqual([
        status,
        code,
        path === undefined ? null : `${answer.body.location} ${answer.body.path}`,
      ]);
      expect(typeof answer.body.request_id).toBe('string');
    }
    expect((await s.call('GET', '/webhooks', key)).body.items).toEqual([]);
    expect((await s.call('GET', '/webhooks/nope', key)).body.error).toBe('invalid_id');
    expect((await s.call('GET', '/webhooks?cursor=x', key)).body.error).toBe('invalid_cursor');
    const big = await s.call(
      'POST',
      '/webhooks',
      key,
      JSON.stringify({ name: 'x'.repeat(6 * 1024 * 1024) }),
    );
    expect([big.status, big.body.error]).toEqual([413, 'request_too_large']);
  });

  it('a filter nested at any depth is 400 filter_too_deep on POST and PATCH (a 1,000-deep chain was a 500: stack overflow in the recursive parse); deep JSON elsewhere is a 4xx', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const leaf = `{"address":{"dir":"any","in":["${address(0xe0001)}"]}}`;
    const chain = (d: number, open: string, close: string) =>
      open.repeat(d) + leaf + close.repeat(d);
    const body = (filters: string) =>
      `{"network":"eth-mainnet","trigger_type":"address_activity","target_url":"${TARGET}","filters":${filters}}`;
    const mine = await create(key);
    for (const depth of [9, 500, 1_000, 10_000, 500_000]) {
      for (const [open, close, step] of [
        ['{"not":', '}', '.not'],
        ['{"all":[', ']}', '.all[0]'],
      ] as const) {
        const filters = chain(depth, open, close);
        const posted = await s.call('POST', '/webhooks', key, body(filters));
        const patched = await s.call(
          'PATCH',
          `/webhooks/${mine.body.id}`,
          key,
          `{"filters":${filters}}`,
        );
        for (const answer of [posted, patched])
          expect([depth, answer.status, answer.body.error, answer.body.path]).toEqual([
            depth,
            400,
            'filter_too_deep',
            'body.filters' + step.repeat(8),
          ]);
      }
    }
    // No route answers deep JSON with a 500 (JSON.parse is iterative; no schema recurses into it).
    const deepArray = '['.repeat(500_000) + ']'.repeat(500_000);
    const list = await s.call('POST', '/address-lists', key, { name: 'deep' });
    for (const [method, path, text] of [
      ['POST', '/webhooks', `{"name":${deepArray}}`],
      ['POST', '/webhooks', body('{}').replace('"filters":{}', `"addresses":${deepArray}`)],
      ['PATCH', `/webhooks/${mine.body.id}`, `{"list_refs":${deepArray}}`],
      ['POST', `/webhooks/${mine.body.id}/pause`, deepArray],
      ['POST', `/webhooks/${mine.body.id}/replay`, `{"from":${deepArray},"to":1}`],
      ['POST', '/address-lists', `{"name":"x","addresses":${deepArray}}`],
      ['POST', `/address-lists/${list.body.id}/entries`, `{"addresses":${deepArray}}`],
    ] as const) {
      const answer = await s.call(method, path, key, text);
      expect([path, answer.status, answer.body.error]).toEqual([path, 400, 'malformed_body']);
    }
    const after = await s.call('GET', `/webhooks/${mine.body.id}`, key);
    expect([after.body.version, after.body.status]).toEqual([1, 'active']);
    expect((await s.call('GET', '/webhooks', key)).body.items).toHaveLength(1);
  });

  it('a repeated Idempotency-Key returns the first webhook and secret', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const a = await create(key, {}, { 'idempotency-key': 'k-1' });
    const b = await create(key, {}, { 'idempotency-key': 'k-1' });
    expect(b.status).toBe(201);
    expect([b.body.id, b.body.secret]).toEqual([a.body.id, a.body.secret]);
    // The spec's record members: nothing attempted or dropped yet.
    expect(a.body.stats).toEqual({ failed_total: 0, rate_limited_total: 0 });
    expect((await s.call('GET', '/webhooks', key)).body.items).toHaveLength(1);
  });

  it.each([
    ['empty', ''],
    ['201 characters', 'k'.repeat(201)],
    ['a space', 'two words'],
    ['non-ASCII', 'clé'],
  ])(
    'an Idempotency-Key header that is %s → 400 invalid_idempotency_key, named as a header; nothing created',
    async (_name, header) => {
      const { key } = await s.billing.createAccount({ plan: 'starter' });
      const answer = await create(key, {}, { 'idempotency-key': header });
      expect([answer.status, answer.body.error]).toEqual([400, 'invalid_idempotency_key']);
      expect(answer.body.message).toMatch(/^headers\.idempotency-key: /);
      expect((await s.call('GET', '/webhooks', key)).body.items).toHaveLength(0);
    },
  );

  it('Idempotency-Key with a different body: 409 idempotency_key_reused, nothing created or changed; the same body in another spelling still replays the first webhook', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const first = await create(key, { name: 'first' }, { 'idempotency-key': 'k-body' });
    expect(first.status).toBe(201);
    for (const other of [
      { name: 'second' },
      { name: 'first', addresses: [address(2)] },
      { name: 'first', target_url: 'https://other.example.com/in' },
      { name: 'first', confirm_depth: 12 },
    ]) {
      const reused = await create(key, other, { 'idempotency-key': 'k-body' });
      expect([reused.status, reused.body.error]).toEqual([409, 'idempotency_key_reused']);
      expect(JSON.stringify(reused.body)).not.toContain(first.body.secret);
    }
    // Same fields, other key order and spacing: the same request.
    const respelled = await s.call(
      'POST',
      '/webhooks',
      key,
      `{ "addresses": ["${address(1)}"], "target_url": "${TARGET}", "name": "first",
         "trigger_type": "address_activity", "network": "eth-mainnet" }`,
      { 'idempotency-key': 'k-body' },
    );
    expect([respelled.status, respelled.body.id, respelled.body.secret]).toEqual([
      201,
      first.body.id,
      first.body.secret,
    ]);
    // The validated, normalised body counts, not its raw values (QA: an address in another
    // case, or `phases` left out vs given as the default, were 409): the same webhook.
    for (const same of [
      { name: ' first ', addresses: [address(1).toUpperCase().replace('0X', '0x')] },
      { name: 'first', phases: ['confirmed', 'unconfirmed'], confirm_depth: 96 },
      {
        name: 'first',
        chain: 'ethereum',
        filters: null,
        target_url: TARGET.replace('hooks.', 'HOOKS.'),
      },
    ]) {
      const again = await create(key, same, { 'idempotency-key': 'k-body' });
      expect([again.status, again.body.id, again.body.secret]).toEqual([
        201,
        first.body.id,
        first.body.secret,
      ]);
    }
    const listed = (await s.call('GET', '/webhooks', key)).body.items;
    expect(listed.map((w: { id: string; version: number }) => [w.id, w.version])).toEqual([
      [first.body.id, 1],
    ]);
    // A key stored with the raw body's fingerprint (before it was normalised) still replays for
    // that body, and is still refused another.
    const raw = {
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: TARGET,
      addresses: [address(1)],
      name: 'first',
    };
    await s.dataSource.query(
      `UPDATE webhooks.webhooks SET idempotency_request_hash = $2 WHERE id = $1`,
      [first.body.id, requestFingerprint('create-webhook', raw)],
    );
    expect((await create(key, { name: 'first' }, { 'idempotency-key': 'k-body' })).body.id).toBe(
      first.body.id,
    );
    expect((await create(key, { name: 'second' }, { 'idempotency-key': 'k-body' })).status).toBe(
      409,
    );
    // A key stored before its fingerprint (migration 1764400000000) replays as it did.
    await s.dataSource.query(
      `UPDATE webhooks.webhooks SET idempotency_request_hash = NULL WHERE id = $1`,
      [first.body.id],
    );
    const old = await create(key, { name: 'second' }, { 'idempotency-key': 'k-body' });
    expect([old.status, old.body.id]).toEqual([201, first.body.id]);
  });

  it('Idempotency-Key after DELETE: 409 idempotency_key_reused (never 201 with a deleted webhook, never a second webhook)', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const first = await create(key, {}, { 'idempotency-key': 'k-deleted' });
    expect((await s.call('DELETE', `/webhooks/${first.body.id}`, key)).status).toBe(200);
    const replay = await create(key, {}, { 'idempotency-key': 'k-deleted' });
    expect([replay.status, replay.body.error]).toEqual([409, 'idempotency_key_reused']);
    expect(JSON.stringify(replay.body)).not.toContain(first.body.secret);
    expect((await s.call('GET', '/webhooks', key)).body.items).toEqual([]);
    // Another key creates as usual.
    expect((await create(key, {}, { 'idempotency-key': 'k-new' })).status).toBe(201);
  });

  it('optimistic concurrency (ADR 0404): every answer of one webhook has ETag "<version>"; PATCH and DELETE with If-Match of another version are 412 version_mismatch and change nothing; without If-Match the last write wins', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const created = await create(key, { name: 'shared' });
    const id = created.body.id as string;
    const etag = (a: { headers: Record<string, unknown>; body: Record<string, unknown> }) => {
      expect(a.headers['etag']).toBe(`"${a.body.version as number}"`);
      return a.headers['etag'] as string;
    };
    const v1 = etag(created);
    expect(etag(await s.call('GET', `/webhooks/${id}`, key))).toBe(v1);

    // Two colleagues read v1; the first saves, the second's save of v1 is refused.
    const first = await s.call(
      'PATCH',
      `/webhooks/${id}`,
      key,
      { name: 'alice' },
      { 'if-match': v1 },
    );
    expect(first.status).toBe(200);
    const v2 = etag(first);
    expect(v2).not.toBe(v1);
    const second = await s.call(
      'PATCH',
      `/webhooks/${id}`,
      key,
      { name: 'bob' },
      { 'if-match': v1 },
    );
    expect(second.status).toBe(412);
    expect(second.body).toMatchObject({
      error: 'version_mismatch',
      details: { currentVersion: first.body.version },
    });
    expect(second.body.message).toContain(v1);
    expect(second.body.message).toContain(`version ${first.body.version as number}`);
    expect((await s.call('GET', `/webhooks/${id}`, key)).body.name).toBe('alice');

    // A list naming the current version, and *, match; a weak tag never does.
    const listed = await s.call(
      'PATCH',
      `/webhooks/${id}`,
      key,
      { name: 'carol' },
      {
        'if-match': `"999", ${v2}`,
      },
    );
    expect(listed.status).toBe(200);
    const v3 = etag(listed);
    expect(
      (await s.call('PATCH', `/webhooks/${id}`, key, { name: 'x' }, { 'if-match': `W/${v3}` }))
        .status,
    ).toBe(412);
    const starred = await s.call(
      'PATCH',
      `/webhooks/${id}`,
      key,
      { name: 'dave' },
      { 'if-match': '*' },
    );
    expect(starred.status).toBe(200);
    // Without If-Match: as before, the last write wins.
    const blind = await s.call('PATCH', `/webhooks/${id}`, key, { name: 'erin' });
    expect(blind.status).toBe(200);
    const current = etag(blind);

    // Malformed: 400 invalid_if_match, nothing changed.
    const malformed = await s.call(
      'PATCH',
      `/webhooks/${id}`,
      key,
      { name: 'y' },
      { 'if-match': '3' },
    );
    expect([malformed.status, malformed.body.error]).toEqual([400, 'invalid_if_match']);
    // Located as platform-http locates a refused header (Idempotency-Key): the house form.
    expect([malformed.body.location, malformed.body.path]).toEqual(['headers', 'headers.if-match']);
    expect(
      (await s.call('DELETE', `/webhooks/${id}`, key, undefined, { 'if-match': 'nope' })).body
        .error,
    ).toBe('invalid_if_match');

    // pause, resume and rotate answer the ETag too.
    const paused = await s.call('POST', `/webhooks/${id}/pause`, key);
    expect(etag(paused)).not.toBe(current);
    const resumed = await s.call('POST', `/webhooks/${id}/resume`, key);
    etag(resumed);
    const rotated = await s.call('POST', `/webhooks/${id}/secret/rotate`, key, {});
    const latest = etag(rotated);

    // DELETE of a version read before the rotation: 412, the webhook stays.
    const staleDelete = await s.call('DELETE', `/webhooks/${id}`, key, undefined, {
      'if-match': etag(resumed),
    });
    expect(staleDelete.status).toBe(412);
    expect(staleDelete.body.details).toEqual({ currentVersion: rotated.body.version });
    expect((await s.call('GET', `/webhooks/${id}`, key)).status).toBe(200);
    const deleted = await s.call('DELETE', `/webhooks/${id}`, key, undefined, {
      'if-match': latest,
    });
    expect([deleted.status, deleted.body.status]).toEqual([200, 'deleted']);
    etag(deleted);
  });

  it('If-Match is checked under the row lock: of two PATCHes of one version sent at once, one is 200 and the other 412', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const created = await create(key);
    const v1 = created.headers['etag'] as string;
    const id = created.body.id as string;
    const answers = await Promise.all(
      ['a', 'b', 'c', 'd'].map((name) =>
        s.call('PATCH', `/webhooks/${id}`, key, { name }, { 'if-match': v1 }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412, 412, 412]);
  });

  it('Idempotency-Key after a secret rotation: the replay answers the webhook as it is now with the secret that signs now (the rotated one)', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const first = await create(key, {}, { 'idempotency-key': 'k-rotated' });
    const rotated = await s.call('POST', `/webhooks/${first.body.id}/secret/rotate`, key, {});
    expect(rotated.body.secret).not.toBe(first.body.secret);
    expect(rotatedWebhookResponse.safeParse(rotated.body).error).toBeUndefined();
    const replay = await create(key, {}, { 'idempotency-key': 'k-rotated' });
    expect(replay.status).toBe(201);
    expect(createdWebhookResponse.safeParse(replay.body).error).toBeUndefined();
    expect([replay.body.id, replay.body.secret, replay.body.version]).toEqual([
      first.body.id,
      rotated.body.secret,
      rotated.body.version,
    ]);
    expect((await s.call('GET', '/webhooks', key)).body.items).toHaveLength(1);
  });

  it("another account's real address-list id, in list_refs or in a filter leaf, is 400 unknown_address_list and tells nothing about that list", async () => {
    const owner = await s.billing.createAccount({ plan: 'starter' });
    const other = await s.billing.createAccount({ plan: 'starter' });
    const theirs = await s.call('POST', '/address-lists', other.key, {
      name: 'their-private-list-name',
      addresses: [address(0xbeef), address(0xcafe)],
    });
    const foreign = theirs.body.id as string;
    const mine = await create(owner.key);
    const attempts = [
      await create(owner.key, { addresses: [], list_refs: [foreign] }),
      await create(owner.key, {
        addresses: [],
        filters: { any: [{ address: { dir: 'in', list_refs: [foreign] } }] },
      }),
      await s.call('PATCH', `/webhooks/${mine.body.id}`, owner.key, { list_refs: [foreign] }),
      await s.call('PATCH', `/webhooks/${mine.body.id}`, owner.key, {
        filters: { not: { address: { dir: 'any', list_refs: [foreign] } } },
      }),
    ];
    for (const answer of attempts) {
      expect([answer.status, answer.body.error]).toEqual([400, 'unknown_address_list']);
      const text = JSON.stringify(answer.body);
      for (const secret of ['their-private-list-name', address(0xbeef), address(0xcafe)])
        expect(text).not.toContain(secret);
      expect(text).not.toMatch(/"size"|"name"|"addresses"/);
    }
    expect((await s.call('GET', '/webhooks', owner.key)).body.items).toHaveLength(1);
    expect((await s.call('GET', `/webhooks/${mine.body.id}`, owner.key)).body).toMatchObject({
      version: 1,
      list_refs: [],
    });
  });

  // QA Low defects of the request words: a lone surrogate was stored as U+FFFD; a repeated
  // parameter read "expected number, received NaN"; a JSON null body "received undefined".
  it('refuses a lone surrogate as it refuses a NUL; names a repeated parameter and a null body', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    for (const name of ['\ud800', 'a\udfffb']) {
      const refused = await create(key, { name });
      expect([refused.status, refused.body.error, refused.body.message]).toEqual([
        400,
        'malformed_body',
        expect.stringMatching(/^text must not contain a lone surrogate \(U\+D[8F]/),
      ]);
    }
    const renamed = await s.call('POST', '/address-lists', key, { name: '\ud83d' });
    expect([renamed.status, renamed.body.error]).toEqual([400, 'malformed_body']);
    // A pair is a character: kept as sent.
    const kept = await create(key, { name: 'hook \u{1F600}' });
    expect([kept.status, kept.body.name]).toEqual([201, 'hook \u{1F600}']);
    const twice = await s.call('GET', '/webhooks?limit=1&limit=2', key);
    expect([twice.status, twice.body.error, twice.body.message]).toEqual([
      400,
      'invalid_query',
      'query.limit: given more than once',
    ]);
    const nullBody = await s.call('POST', '/webhooks', key, 'null');
    expect([nullBody.status, nullBody.body.error, nullBody.body.message]).toEqual([
      400,
      'malformed_body',
      'body: the body must be a JSON object, received null',
    ]);
  });

  it('entries of a list page like every list route (COMPAT: limit default 50, max 200)', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const list = await s.call('POST', '/address-lists', key, {
      name: 'paged',
      addresses: Array.from({ length: 260 }, (_, i) => address(i + 1)),
    });
    const first = await s.call('GET', `/address-lists/${list.body.id}/entries`, key);
    expect(first.body.items).toHaveLength(50);
    expect(entriesPage.safeParse(first.body).error).toBeUndefined();
    const widest = await s.call('GET', `/address-lists/${list.body.id}/entries?limit=200`, key);
    expect(widest.body.items).toHaveLength(200);
    const rest = await s.call(
      'GET',
      `/address-lists/${list.body.id}/entries?limit=200&cursor=${widest.body.next_cursor}`,
      key,
    );
    expect(rest.body.items).toHaveLength(60);
    expect(rest.body.next_cursor).toBeNull();
    const tooMany = await s.call('GET', `/address-lists/${list.body.id}/entries?limit=201`, key);
    expect([tooMany.status, tooMany.body.error]).toEqual([400, 'invalid_query']);
  });

  it('entries ?prefix= answers the addresses starting with it, paged; a bad one is 400 invalid_prefix', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const other = await s.billing.createAccount({ plan: 'starter' });
    /** 0x, `start`, then `fill` up to 40 digits ending in `last`. */
    const at = (start: string, fill = '0', last = '') =>
      `0x${start}`.padEnd(42 - last.length, fill) + last;
    const under = [at('ab', '0', '1'), at('ab', '0', '2'), at('ab', '0', '3'), at('ab', 'f')];
    const list = await s.call('POST', '/address-lists', key, {
      name: 'prefixed',
      // Just below and just above the range of 0xab, and elsewhere.
      addresses: [at('aa', 'f'), ...under, at('ac'), at('0b'), at('b0')],
    });
    expect(list.body.size).toBe(8);
    // Another account's list with an address under 0xab: never in this list's answers.
    const theirs = await s.call('POST', '/address-lists', other.key, {
      name: 'theirs',
      addresses: [at('ab', '0', '4')],
    });
    const entries = (id: string, query: string, k = key) =>
      s.call('GET', `/address-lists/${id}/entries?${query}`, k);

    const all = await entries(list.body.id, 'prefix=0xAB');
    expect(all.status).toBe(200);
    expect(all.body).toEqual({ items: under, next_cursor: null });
    expect(entriesPage.safeParse(all.body).error).toBeUndefined();
    const first = await entries(list.body.id, 'prefix=0xab&limit=2');
    expect(first.body).toEqual({ items: under.slice(0, 2), next_cursor: under[1] });
    const rest = await entries(
      list.body.id,
      `prefix=0xab&limit=2&cursor=${first.body.next_cursor}`,
    );
    // The page after ends with the prefix's last address, not the list's next one (0xac…).
    expect(rest.body).toEqual({ items: under.slice(2), next_cursor: null });
    const whole = await entries(
      list.body.id,
      `prefix=${under[2]!.toUpperCase().replace('0X', '0x')}`,
    );
    expect(whole.body).toEqual({ items: [under[2]], next_cursor: null });
    const none = await entries(list.body.id, 'prefix=0xab1');
    expect(none.body).toEqual({ items: [], next_cursor: null });

    for (const bad of ['0xzz', '0x', 'ab', `0x${'a'.repeat(41)}`]) {
      const refused = await entries(list.body.id, `prefix=${encodeURIComponent(bad)}`);
      expect([bad, refused.status, refused.body.error, refused.body.path]).toEqual([
        bad,
        400,
        'invalid_prefix',
        'query.prefix',
      ]);
      expect(refused.body.request_id).toEqual(expect.any(String));
    }

    const foreign = await entries(list.body.id, 'prefix=0xab', other.key);
    expect([foreign.status, foreign.body.error]).toEqual([404, 'not_found']);
    const theirOwn = await entries(theirs.body.id, 'prefix=0xab', other.key);
    expect(theirOwn.body).toEqual({ items: [at('ab', '0', '4')], next_cursor: null });
  });

  it('address-list create with Idempotency-Key (QQ: a retried create made a second list): the same request, in any spelling, answers the first list (201); another body is 409 idempotency_key_reused; requests with one key at once make one list', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const lists = async () => (await s.call('GET', '/address-lists', key)).body.items as unknown[];
    const createList = (body: unknown, idempotencyKey: string) =>
      s.call('POST', '/address-lists', key, body, { 'idempotency-key': idempotencyKey });
    const first = await createList(
      { name: 'treasury', addresses: [address(0xabc), address(0xdef)] },
      'k1',
    );
    expect(first.status).toBe(201);
    // The same list asked for again: name spacing, address case and order do not count.
    const again = await createList(
      {
        name: ' treasury ',
        addresses: [address(0xdef).toUpperCase().replace('0X', '0x'), address(0xabc)],
      },
      'k1',
    );
    expect([again.status, again.body]).toEqual([201, first.body]);
    const other = await createList({ name: 'treasury', addresses: [address(3)] }, 'k1');
    expect([other.status, other.body.error]).toEqual([409, 'idempotency_key_reused']);
    expect(await lists()).toHaveLength(1);
    // The replay answers the list as it is now.
    expect(
      (await s.call('PATCH', `/address-lists/${first.body.id}`, key, { name: 'renamed' })).status,
    ).toBe(200);
    const replay = await createList(
      { name: 'treasury', addresses: [address(0xabc), address(0xdef)] },
      'k1',
    );
    expect([replay.status, replay.body.id, replay.body.name]).toEqual([
      201,
      first.body.id,
      'renamed',
    ]);

    const racing = await Promise.all(
      Array.from({ length: 6 }, () => createList({ name: 'raced', addresses: [address(4)] }, 'k2')),
    );
    expect(racing.map((a) => a.status)).toEqual(Array(6).fill(201));
    expect(new Set(racing.map((a) => a.body.id)).size).toBe(1);
    expect(await lists()).toHaveLength(2);

    const bad = await createList({ name: 'x' }, 'with space');
    expect([bad.status, bad.body.error]).toEqual([400, 'invalid_idempotency_key']);
    // Without a key, every create is a list of its own, as before.
    expect((await s.call('POST', '/address-lists', key, { name: 'raced' })).status).toBe(201);
    expect(await lists()).toHaveLength(3);
  });

  it('address lists: add ignores duplicates, replace, remove, pages entries; a referenced list cannot be deleted', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const list = await s.call('POST', '/address-lists', key, {
      name: 'hot',
      addresses: [address(1), address(2).toUpperCase().replace('0X', '0x')],
    });
    expect(list.status).toBe(201);
    expect(list.body.size).toBe(2);
    expect(addressListResponse.safeParse(list.body).error).toBeUndefined();
    const added = await s.call('POST', `/address-lists/${list.body.id}/entries`, key, {
      addresses: [address(2), address(3)],
    });
    expect(added.body).toMatchObject({ size: 3, added: 1 });
    expect(entriesChangeResponse.safeParse(added.body).error).toBeUndefined();
    const bad = await s.call('POST', `/address-lists/${list.body.id}/entries`, key, {
      addresses: [address(4), 'zz'],
    });
    expect([bad.status, bad.body.error, bad.body.path]).toEqual([
      400,
      'invalid_address',
      'body.addresses[1]',
    ]);
    const page = await s.call('GET', `/address-lists/${list.body.id}/entries?limit=2`, key);
    expect(page.body.items).toEqual([address(1), address(2)]);
    const rest = await s.call(
      'GET',
      `/address-lists/${list.body.id}/entries?limit=2&cursor=${page.body.next_cursor}`,
      key,
    );
    expect(rest.body).toEqual({ items: [address(3)], next_cursor: null });
    expect(entriesPage.safeParse(page.body).error).toBeUndefined();
    const replaced = await s.call('PUT', `/address-lists/${list.body.id}/entries`, key, {
      addresses: [address(3), address(9)],
    });
    expect(replaced.body).toMatchObject({ size: 2, added: 1, removed: 2 });
    expect(entriesChangeResponse.safeParse(replaced.body).error).toBeUndefined();
    const removed = await s.call('POST', `/address-lists/${list.body.id}/entries/remove`, key, {
      addresses: [address(9), address(8)],
    });
    // The list with both counts, added 0 (the README said "list + removed").
    expect(removed.body).toMatchObject({ size: 1, added: 0, removed: 1 });
    expect(entriesChangeResponse.safeParse(removed.body).error).toBeUndefined();
    const hook = await create(key, { addresses: [], list_refs: [list.body.id] });
    expect(hook.status).toBe(201);
    const inUse = await s.call('DELETE', `/address-lists/${list.body.id}`, key);
    expect([inUse.status, inUse.body.error]).toEqual([409, 'list_in_use']);
    await s.call('DELETE', `/webhooks/${hook.body.id}`, key);
    expect((await s.call('DELETE', `/address-lists/${list.body.id}`, key)).status).toBe(204);
    expect((await s.call('GET', `/address-lists/${list.body.id}`, key)).status).toBe(404);
  });

  it('EVM addresses (ADR 0403): all lower, all upper and a right EIP-55 checksum are stored lower case; mixed case with a wrong checksum is 400 invalid_address_checksum naming the checksummed form, on a webhook (shorthand, address and contract leaves, PATCH) and an address list (create, add, replace, remove), and nothing is written', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    // anvil's account 1, and the README walkthrough's old typo of it (…dC79C8 for …dc79C8).
    const RIGHT = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
    const TYPO = '0x70997970C51812dc3A010C7d01b50e0d17dC79C8';
    const LOWER = RIGHT.toLowerCase();
    const UPPER = `0x${RIGHT.slice(2).toUpperCase()}`;
    const refusals: Array<[Record<string, unknown>, string]> = [
      [{ addresses: [address(1), TYPO] }, 'body.addresses[1]'],
      [
        {
          addresses: [],
          filters: { any: [{ address: { in: [RIGHT] } }, { address: { in: [TYPO] } }] },
        },
        'body.filters.any[1].address.in[0]',
      ],
      [
        {
          trigger_type: 'log_event',
          addresses: [],
          filters: { all: [{ address: { in: [RIGHT] } }, { contract: { in: [TYPO] } }] },
        },
        'body.filters.all[1].contract.in[0]',
      ],
    ];
    for (const [body, path] of refusals) {
      const answer = await create(key, body);
      expect([answer.status, answer.body.error, answer.body.path, answer.body.expected]).toEqual([
        400,
        'invalid_address_checksum',
        path,
        RIGHT,
      ]);
      expect(answer.body.message).toContain(RIGHT);
    }
    expect((await s.call('GET', '/webhooks', key)).body.items).toEqual([]);
    const hook = await create(key, { addresses: [LOWER, UPPER, RIGHT] });
    expect(hook.status).toBe(201);
    expect(hook.body.addresses).toEqual([LOWER, LOWER, LOWER]);
    const patch = await s.call('PATCH', `/webhooks/${hook.body.id}`, key, { addresses: [TYPO] });
    expect([patch.status, patch.body.error, patch.body.path]).toEqual([
      400,
      'invalid_address_checksum',
      'body.addresses[0]',
    ]);
    expect((await s.call('GET', `/webhooks/${hook.body.id}`, key)).body.version).toBe(1);

    const refusedList = await s.call('POST', '/address-lists', key, {
      name: 'typo',
      addresses: [RIGHT, TYPO],
    });
    expect([refusedList.status, refusedList.body.error, refusedList.body.path]).toEqual([
      400,
      'invalid_address_checksum',
      'body.addresses[1]',
    ]);
    expect((await s.call('GET', '/address-lists', key)).body.items).toEqual([]);
    const list = await s.call('POST', '/address-lists', key, {
      name: 'treasury',
      addresses: [UPPER, address(1)],
    });
    expect([list.status, list.body.size]).toEqual([201, 2]);
    // A bulk add names the first refused entry (code, path) and lists every refused one.
    const add = await s.call('POST', `/address-lists/${list.body.id}/entries`, key, {
      addresses: [address(2), TYPO, 'zz', RIGHT, TYPO],
    });
    expect(add.status).toBe(400);
    expect(add.body).toMatchObject({
      error: 'invalid_address_checksum',
      location: 'body',
      path: 'body.addresses[1]',
      expected: RIGHT,
      refused: [
        { path: 'body.addresses[1]', error: 'invalid_address_checksum', expected: RIGHT },
        { path: 'body.addresses[2]', error: 'invalid_address' },
        { path: 'body.addresses[4]', error: 'invalid_address_checksum', expected: RIGHT },
      ],
      refused_total: 3,
    });
    for (const [method, route] of [
      ['PUT', 'entries'],
      ['POST', 'entries/remove'],
    ]) {
      const answer = await s.call(method, `/address-lists/${list.body.id}/${route}`, key, {
        addresses: [TYPO],
      });
      expect([answer.status, answer.body.error]).toEqual([400, 'invalid_address_checksum']);
    }
    const entries = await s.call('GET', `/address-lists/${list.body.id}/entries`, key);
    expect(entries.body.items).toEqual([address(1), LOWER]);
    const added = await s.call('POST', `/address-lists/${list.body.id}/entries`, key, {
      addresses: [RIGHT, address(2)],
    });
    expect(added.body).toMatchObject({ size: 3, added: 1, version: 2 });
  });

  it('an address list moves version and updated_at only on a real change: a new list is version 1 (empty or not); an add of nothing new, a replace by the same set, a remove of nothing and a rename to the same name change nothing and write no change-feed row', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const empty = await s.call('POST', '/address-lists', key, { name: 'empty' });
    expect([empty.status, empty.body.version, empty.body.size]).toEqual([201, 1, 0]);
    const list = await s.call('POST', '/address-lists', key, {
      name: 'one',
      addresses: [address(1)],
    });
    expect([list.body.version, list.body.size]).toEqual([1, 1]);
    expect(list.body.updated_at).toBe(list.body.created_at);
    const feed = async () =>
      (
        await s.dataSource.query(
          `SELECT count(*)::int AS n FROM webhooks.change_log WHERE account_id = $1`,
          [accountId],
        )
      )[0].n as number;
    const rowsBefore = await feed();
    s.clock.advance(60_000);
    const id = list.body.id as string;
    const noops = [
      await s.call('POST', `/address-lists/${id}/entries`, key, { addresses: [address(1)] }),
      await s.call('POST', `/address-lists/${id}/entries`, key, { addresses: [] }),
      await s.call('PUT', `/address-lists/${id}/entries`, key, {
        addresses: [address(1).toUpperCase().replace('0X', '0x')],
      }),
      await s.call('POST', `/address-lists/${id}/entries/remove`, key, {
        addresses: [address(2)],
      }),
      await s.call('PATCH', `/address-lists/${id}`, key, { name: 'one' }),
    ];
    for (const answer of noops) {
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ version: 1, size: 1, updated_at: list.body.updated_at });
    }
    expect(await feed()).toBe(rowsBefore);
    // A real change moves both, once each.
    const added = await s.call('POST', `/address-lists/${id}/entries`, key, {
      addresses: [address(2)],
    });
    expect(added.body).toMatchObject({ version: 2, size: 2, added: 1 });
    expect(added.body.updated_at).not.toBe(list.body.updated_at);
    const renamed = await s.call('PATCH', `/address-lists/${id}`, key, { name: 'two' });
    expect(renamed.body).toMatchObject({ version: 3, name: 'two' });
    expect(addressListResponse.safeParse(renamed.body).error).toBeUndefined();
    expect(await feed()).toBe(rowsBefore + 1);
  });

  it('a replay of a malformed event id is 400 invalid_id like a malformed webhook id; a well-formed unknown one is 404', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const hook = (await create(key)).body.id as string;
    for (const eventId of ['zzz', 'ev_123', `ev_${'A'.repeat(32)}`, `ev_${'0'.repeat(33)}`]) {
      const answer = await s.call('POST', `/webhooks/${hook}/deliveries/${eventId}/replay`, key);
      expect([eventId, answer.status, answer.body.error]).toEqual([eventId, 400, 'invalid_id']);
    }
    for (const eventId of [`ev_${'0'.repeat(32)}`, `test_${'a'.repeat(24)}`]) {
      const answer = await s.call('POST', `/webhooks/${hook}/deliveries/${eventId}/replay`, key);
      expect([eventId, answer.status, answer.body.error]).toEqual([eventId, 404, 'not_found']);
    }
    const badHook = await s.call('POST', `/webhooks/nope/deliveries/zzz/replay`, key);
    expect([badHook.status, badHook.body.error]).toEqual([400, 'invalid_id']);
    // Another account's webhook is 404 whatever the event id: nothing tells it from an unknown one.
    const other = await s.billing.createAccount({ plan: 'starter' });
    const foreign = await s.call('POST', `/webhooks/${hook}/deliveries/zzz/replay`, other.key);
    expect([foreign.status, foreign.body.error]).toEqual([404, 'not_found']);
  });

  /** A 32-byte transaction hash, as written by a client (any case). */
  const txHash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

  it('tx_hash leaf: a malformed hash is 400 invalid_tx_hash naming the value and its path; tx_confirmation without a tx_hash on every path is 400 tx_hash_required; more than 1,000 hashes is filter_too_large; nothing is written', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const tx = { trigger_type: 'tx_confirmation' };
    const malformed = await create(key, {
      ...tx,
      addresses: [],
      filters: { any: [{ tx_hash: { in: [txHash(1), '0xnot-a-hash'] } }] },
    });
    expect([malformed.status, malformed.body.error, malformed.body.path]).toEqual([
      400,
      'invalid_tx_hash',
      'body.filters.any[0].tx_hash.in[1]',
    ]);
    expect(malformed.body.message).toContain('0xnot-a-hash');
    expect(malformed.body.message).toContain('body.filters.any[0].tx_hash.in[1]');
    // A hash one byte short is no hash either (checked in every trigger type).
    const short = await create(key, { filters: { tx_hash: { in: [txHash(1).slice(0, -2)] } } });
    expect([short.status, short.body.error, short.body.path]).toEqual([
      400,
      'invalid_tx_hash',
      'body.filters.tx_hash.in[0]',
    ]);
    for (const body of [
      // Addresses only (the shorthand), no filter tree at all.
      { addresses: [address(1)] },
      // A tree of an address leaf only.
      { addresses: [], filters: { address: { dir: 'in', in: [address(2)] } } },
      // `any` with one branch that needs no hash.
      {
        addresses: [],
        filters: { any: [{ tx_hash: { in: [txHash(2)] } }, { address: { in: [address(3)] } }] },
      },
      // `not` of a hash holds for every other transaction.
      { addresses: [], filters: { not: { tx_hash: { in: [txHash(3)] } } } },
    ]) {
      const answer = await create(key, { ...tx, ...body });
      expect([answer.status, answer.body.error, answer.body.path]).toEqual([
        400,
        'tx_hash_required',
        'body.filters',
      ]);
    }
    const hashes = (from: number) => Array.from({ length: 600 }, (_, i) => txHash(from + i));
    const tooMany = await create(key, {
      ...tx,
      addresses: [],
      filters: { any: [{ tx_hash: { in: hashes(1) } }, { tx_hash: { in: hashes(601) } }] },
    });
    expect([tooMany.status, tooMany.body.error, tooMany.body.path]).toEqual([
      400,
      'filter_too_large',
      'body.filters.any[1].tx_hash.in[400]',
    ]);
    expect((await s.call('GET', '/webhooks', key)).body.items).toEqual([]);
  });

  it('PATCH of a tx_confirmation webhook that removes its hashes is 400 tx_hash_required and changes nothing', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const hook = await create(key, {
      trigger_type: 'tx_confirmation',
      phases: ['confirmed'],
      filters: { tx_hash: { in: [txHash(7)] } },
    });
    expect(hook.status).toBe(201);
    const before = (await s.call('GET', `/webhooks/${hook.body.id}`, key)).body;
    for (const patch of [
      { filters: null },
      { filters: { address: { in: [address(2)] } } },
      { filters: { not: { tx_hash: { in: [txHash(7)] } } }, name: 'renamed' },
    ]) {
      const answer = await s.call('PATCH', `/webhooks/${hook.body.id}`, key, patch);
      expect([answer.status, answer.body.error, answer.body.path]).toEqual([
        400,
        'tx_hash_required',
        'body.filters',
      ]);
    }
    const after = (await s.call('GET', `/webhooks/${hook.body.id}`, key)).body;
    expect(after).toEqual(before);
    expect(after).toMatchObject({ version: 1, filters: { tx_hash: { in: [txHash(7)] } } });
    const feed: unknown[] = await s.dataSource.query(
      `SELECT 1 FROM webhooks.change_log WHERE account_id = $1`,
      [accountId],
    );
    expect(feed).toHaveLength(1);
    // A patch that keeps a hash on every path goes through.
    const kept = await s.call('PATCH', `/webhooks/${hook.body.id}`, key, {
      filters: { tx_hash: { in: [txHash(7), txHash(8)] } },
    });
    expect([kept.status, kept.body.version, kept.body.filters]).toEqual([
      200,
      2,
      { tx_hash: { in: [txHash(7), txHash(8)] } },
    ]);
  });

  it('a tx_hash given in mixed case is stored and returned lower case', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const mixed = '0x' + 'aBcD'.repeat(16);
    const lower = mixed.toLowerCase();
    const hook = await create(key, {
      trigger_type: 'tx_confirmation',
      addresses: [],
      filters: { tx_hash: { in: [mixed] } },
    });
    expect(hook.status).toBe(201);
    expect(hook.body.filters).toEqual({ tx_hash: { in: [lower] } });
    expect(createdWebhookResponse.safeParse(hook.body).error).toBeUndefined();
    expect((await s.call('GET', `/webhooks/${hook.body.id}`, key)).body.filters).toEqual({
      tx_hash: { in: [lower] },
    });
    const [row]: Array<{ filters: unknown; filter_tree: unknown }> = await s.dataSource.query(
      `SELECT filters, filter_tree FROM webhooks.webhooks WHERE id = $1`,
      [hook.body.id],
    );
    expect(row).toEqual({
      filters: { tx_hash: { in: [lower] } },
      filter_tree: { tx_hash: { in: [lower] } },
    });
    expect(JSON.stringify(row)).not.toContain(mixed);
  });

  it('every answer parses with its response schema (ADR 0602): a filter tree of every node kind with list refs, paused, resumed, rotated, tested, deleted; lists; the limits', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const watched = await s.call('POST', '/address-lists', key, {
      name: 'watched',
      addresses: [address(0x51)],
    });
    const shorthand = await s.call('POST', '/address-lists', key, { name: 'shorthand' });
    for (const list of [watched, shorthand])
      expect(addressListResponse.safeParse(list.body).error).toBeUndefined();
    const gotList = await s.call('GET', `/address-lists/${watched.body.id}`, key);
    expect(addressListResponse.safeParse(gotList.body).error).toBeUndefined();
    const lists = await s.call('GET', '/address-lists', key);
    expect(lists.body.items).toHaveLength(2);
    expect(addressListsPage.safeParse(lists.body).error).toBeUndefined();

    const topic = `0x${'DD'.repeat(32)}`;
    const tx = `0x${'Ee'.repeat(32)}`;
    const created = await create(key, {
      name: null,
      trigger_type: 'log_event',
      addresses: [address(0x54)],
      list_refs: [shorthand.body.id],
      confirm_depth: 12,
      phases: ['confirmed'],
      filters: {
        all: [
          {
            any: [
              {
                address: {
                  dir: 'in',
                  in: [address(0xabc52).toUpperCase().replace('0X', '0x')],
                  list_refs: [watched.body.id],
                },
              },
              { contract: { in: [address(0x53)] } },
              { tx_hash: { in: [tx] } },
            ],
          },
          { topic: { position: 0, in: [topic] } },
          { not: { address: { list_refs: [watched.body.id] } } },
        ],
      },
    });
    expect(created.status).toBe(201);
    expect(createdWebhookResponse.safeParse(created.body).error).toBeUndefined();
    expect(created.body).toMatchObject({
      name: null,
      trigger_type: 'log_event',
      addresses: [address(0x54)],
      list_refs: [shorthand.body.id],
      phases: ['confirmed'],
      filters: {
        all: [
          {
            any: [
              { address: { dir: 'in', in: [address(0xabc52)], list_refs: [watched.body.id] } },
              { contract: { in: [address(0x53)] } },
              { tx_hash: { in: [tx.toLowerCase()] } },
            ],
          },
          { topic: { position: 0, in: [topic.toLowerCase()] } },
          { not: { address: { dir: 'any', in: [], list_refs: [watched.body.id] } } },
        ],
      },
    });
    const id = created.body.id as string;

    const paused = await s.call('POST', `/webhooks/${id}/pause`, key);
    expect(paused.body).toMatchObject({ status: 'paused', status_label: 'Paused' });
    expect(webhookResponse.safeParse(paused.body).error).toBeUndefined();
    // Strict, and the label must be the status's: the schemas refuse what the view never sends.
    expect(webhookResponse.safeParse({ ...paused.body, extra: 1 }).success).toBe(false);
    expect(webhookResponse.safeParse({ ...paused.body, status_label: 'Active' }).success).toBe(
      false,
    );
    const listed = await s.call('GET', '/webhooks', key);
    expect(listed.body.items).toEqual([expect.objectContaining({ id, status: 'paused' })]);
    expect(webhooksPage.safeParse(listed.body).error).toBeUndefined();

    const resumed = await s.call('POST', `/webhooks/${id}/resume`, key);
    expect(resumed.body).toMatchObject({ status: 'active', status_label: 'Active' });
    expect(webhookResponse.safeParse(resumed.body).error).toBeUndefined();
    const tested = await s.call('POST', `/webhooks/${id}/test`, key);
    expect(tested.status).toBe(202);
    expect(testDeliveryResponse.safeParse(tested.body).error).toBeUndefined();

    // The body may be left out: /openapi.json declares it optional (the last test checks the
    // accepted bodies against the document, which required one before).
    const bare = await s.call('POST', `/webhooks/${id}/secret/rotate`, key);
    expect([bare.status, rotatedWebhookResponse.safeParse(bare.body).error]).toEqual([
      200,
      undefined,
    ]);
    const rotated = await s.call('POST', `/webhooks/${id}/secret/rotate`, key, {});
    expect(rotated.body.previous_secret_expires_at).toEqual(expect.any(String));
    expect(rotatedWebhookResponse.safeParse(rotated.body).error).toBeUndefined();
    const expired = await s.call('POST', `/webhooks/${id}/secret/rotate`, key, {
      expire_previous: true,
    });
    expect(expired.body.previous_secret_expires_at).toBeNull();
    expect(rotatedWebhookResponse.safeParse(expired.body).error).toBeUndefined();

    const limits = await s.call('GET', '/webhooks/limits', key);
    expect(limits.body).toMatchObject({
      tier: 'starter',
      usage: { active_webhooks: 1, address_lists: 2 },
    });
    expect(limitsResponse.safeParse(limits.body).error).toBeUndefined();

    const deleted = await s.call('DELETE', `/webhooks/${id}`, key);
    expect(deleted.body).toMatchObject({ status: 'deleted', status_label: null });
    expect(webhookResponse.safeParse(deleted.body).error).toBeUndefined();
  });

  it('the webhook-status entry carries the latest return to active (when, from which status) from the resume on, also after later changes; none before', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const hook = await create(key);
    const id: string = hook.body.id;
    const nc = await connect({ servers: testNatsUrl() });
    try {
      const kv = await new Kvm(nc).open(
        new NatsNamespace(s.natsPrefix).bucket(KvBuckets.webhookStatus.name),
      );
      const entryAt = async (version: number) => {
        let value: ReturnType<typeof WebhookStatusEntrySchema.parse> | undefined;
        await eventually(async () => {
          const entry = await kv.get(id);
          value = entry ? WebhookStatusEntrySchema.parse(entry.json()) : undefined;
          return value?.version === version;
        });
        return value!;
      };
      expect((await entryAt(1)).reactivated).toBeUndefined();
      expect((await s.call('POST', `/webhooks/${id}/pause`, key)).status).toBe(200);
      expect((await entryAt(2)).reactivated).toBeUndefined();
      expect((await s.call('POST', `/webhooks/${id}/resume`, key)).status).toBe(200);
      const [resume] = await s.dataSource.query(
        `SELECT at FROM webhooks.status_history WHERE webhook_id = $1 AND to_status = 'active'
         ORDER BY id DESC LIMIT 1`,
        [id],
      );
      const reactivated = { at: (resume.at as Date).toISOString(), from: 'paused' };
      expect(await entryAt(3)).toMatchObject({ status: 'active', reactivated });
      await s.call('POST', `/webhooks/${id}/secret/rotate`, key, {});
      expect(await entryAt(4)).toMatchObject({ status: 'active', reactivated });
    } finally {
      await nc.close();
    }
  });

  it('a pause of a paused webhook and a resume of an active one change nothing: same answer, no history or change-feed row, nothing published to the webhook-status bucket', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const id: string = (await create(key)).body.id;
    const written = async () =>
      (
        await s.dataSource.query(
          `SELECT (SELECT count(*)::int FROM webhooks.change_log WHERE account_id = $1) AS feed,
                  (SELECT count(*)::int FROM webhooks.status_history WHERE webhook_id = $2) AS history,
                  (SELECT published_version FROM webhooks.webhooks WHERE id = $2) AS published`,
          [accountId, id],
        )
      )[0] as { feed: number; history: number; published: number };
    const publish = jest.spyOn(s.app.get(StatusPublisher), 'publish');
    const nc = await connect({ servers: testNatsUrl() });
    try {
      const kv = await new Kvm(nc).open(
        new NatsNamespace(s.natsPrefix).bucket(KvBuckets.webhookStatus.name),
      );
      // The entry's revision (its stream sequence) moves with every put, the same value or not.
      const revisionAt = async (version: number) => {
        let revision = 0;
        await eventually(async () => {
          const entry = await kv.get(id);
          revision = entry?.revision ?? 0;
          return !!entry && WebhookStatusEntrySchema.parse(entry.json()).version === version;
        });
        return revision;
      };
      for (const [action, status, version] of [
        ['pause', 'paused', 2],
        ['resume', 'active', 3],
      ] as const) {
        const first = await s.call('POST', `/webhooks/${id}/${action}`, key);
        expect([first.status, first.body.status, first.body.version]).toEqual([
          200,
          status,
          version,
        ]);
        const revision = await revisionAt(version);
        const before = await written();
        // The real publisher, called through: a repeat must not ask it to publish at all.
        publish.mockClear();
        const again = await s.call('POST', `/webhooks/${id}/${action}`, key);
        expect([again.status, again.body]).toEqual([200, first.body]);
        expect(publish).not.toHaveBeenCalled();
        expect(await written()).toEqual(before);
        expect((await kv.get(id))!.revision).toBe(revision);
      }
    } finally {
      publish.mockRestore();
      await nc.close();
    }
  });

  it('every change lands in the change feed and the webhook-status KV bucket with a monotonic version', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const hook = await create(key);
    await s.call('POST', `/webhooks/${hook.body.id}/pause`, key);
    const rotated = await s.call('POST', `/webhooks/${hook.body.id}/secret/rotate`, key, {});
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(hook.body.secret);
    const feed: Array<{ webhook_id: string }> = await s.dataSource.query(
      `SELECT webhook_id FROM webhooks.change_log WHERE account_id = $1 ORDER BY seq`,
      [accountId],
    );
    expect(feed.map((r) => r.webhook_id)).toEqual([hook.body.id, hook.body.id, hook.body.id]);
    const nc = await connect({ servers: testNatsUrl() });
    try {
      const kv = await new Kvm(nc).open(
        new NatsNamespace(s.natsPrefix).bucket(KvBuckets.webhookStatus.name),
      );
      await eventually(async () => {
        const entry = await kv.get(hook.body.id);
        if (!entry) return false;
        const value = WebhookStatusEntrySchema.parse(entry.json());
        return (
          value.version === 3 &&
          value.status === 'paused' &&
          value.secrets.length === 2 &&
          value.secrets[1]!.expiresAt !== null
        );
      });
      await s.call('POST', `/webhooks/${hook.body.id}/secret/rotate`, key, {
        expire_previous: true,
      });
      await eventually(
        async () =>
          WebhookStatusEntrySchema.parse((await kv.get(hook.body.id))!.json()).secrets.length === 1,
      );
    } finally {
      await nc.close();
    }
  });

  // Last: the document's request schemas are declared apart from the loose ones the routes
  // validate with (webhook.schemas.ts), so every body this file's requests had accepted must
  // fit what /openapi.json declares (and a route declared without a body got none, or {}).
  it('declares in /openapi.json a request schema accepting every body the routes accepted above', async () => {
    const served = await s.app.inject({ method: 'GET', url: '/openapi.json' });
    const document = served.json() as Record<string, unknown>;
    const bodies = s.accepted.filter((r) => ['POST', 'PATCH', 'PUT'].includes(r.method));
    expect(
      bodies.filter((r) => r.method === 'POST' && r.path === '/api/v1/webhooks').length,
    ).toBeGreaterThan(10);
    expect(bodies.filter((r) => r.method === 'PATCH').length).toBeGreaterThan(3);
    expect(undeclaredBodies(document, bodies)).toEqual([]);
  });
});
