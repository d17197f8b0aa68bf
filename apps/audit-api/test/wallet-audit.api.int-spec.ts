import { encodeFunctionData, keccak256, parseEther, toHex } from 'viem';
import { FakeClock, startAnvil, type AnvilInstance } from '@meridian/testing';
import {
  errorResponseSchema,
  walletAuditResponseSchema,
  walletCheckResponseSchema,
} from '../src/wallet/audit-response.schemas';
import { ROUTE_ERRORS } from '../src/common/route-errors';
import { loadOneLabel, startAuditApp, type AuditTestApp } from './support/audit-app';
import { startBillingLedger, type RunningBillingLedger } from './support/billing-ledger.process';
import { devnetRpc, fixture } from './support/devnet';

// An OFAC SDN address (LAZARUS GROUP) in the ultrasoundmoney pack, as published (EIP-55).
const SANCTIONED = '0x098B716B8Aaf21512996dC57EB0615e2383E2f96';
const FRESH = '0x1111111111111111111111111111111111111111';
// A Tornado Cash ETH pool in the etherscan-tornado-cash pack (a mixer; the scenarios' pool too).
const TORNADO_POOL = '0x12D66f87A04A9E220743712cE6d9bB1B5616B8Fc';

describe('audit API: wallet risk and wallet audit (real billing-ledger, anvil as ETH)', () => {
  let billing: RunningBillingLedger;
  let anvil: AnvilInstance;
  let audit: AuditTestApp;
  const clock = new FakeClock('2026-03-02T08:00:00.000Z');
  let premium: string;

  beforeAll(async () => {
    [billing, anvil] = await Promise.all([startBillingLedger(), startAnvil({ chainId: 1 })]);
    audit = await startAuditApp(
      {
        BILLING_GRPC_URL: billing.grpcTarget,
        AUDIT_RPC_URLS: JSON.stringify({ ETH: anvil.url, POLY: 'http://127.0.0.1:1' }),
      },
      { clock },
    );
    premium = (await billing.createAccount('premium')).key;
  }, 90_000);

  afterAll(async () => {
    await audit?.close();
    await Promise.all([billing?.stop(), anvil?.stop()]);
  });

  const tick = () => clock.advance(2_000);
  /** A JSON-RPC call to anvil that must succeed. */
  const rpc = (method: string, params: unknown[]) => devnetRpc(anvil.url, method, params);

  it('rejects missing and unknown keys with 401 and a key without the audit scope with 403', async () => {
    const none = await audit.post('/v1/wallet-audit/check', { network: 'ETH', address: FRESH });
    expect(none.status).toBe(401);
    expect(errorResponseSchema.parse(none.body).error).toBe('missing_api_key');
    const bad = await audit.post(
      '/v1/wallet-audit/check',
      { network: 'ETH', address: FRESH },
      'mrd_not_a_key',
    );
    expect([bad.status, bad.body.error]).toEqual([401, 'invalid_api_key']);
    const account = await billing.createAccount('starter');
    const webhooksOnly = await billing.createKey(account.key, ['webhooks']);
    const forbidden = await audit.post(
      '/v1/wallet-audit/check',
      { network: 'ETH', address: FRESH },
      webhooksOnly,
    );
    expect([forbidden.status, forbidden.body.error]).toEqual([403, 'audit_scope_required']);
  });

  it.each([
    ['not JSON', '{"network":', 'malformed_body'],
    ['an array body', [], 'malformed_body'],
    ['no network', { address: FRESH }, 'missing_network'],
    ['a numeric network', { network: 1, address: FRESH }, 'invalid_network'],
    ['an unknown network', { network: 'DOGE', address: FRESH }, 'unknown_network'],
    ['no address', { network: 'ETH' }, 'missing_address'],
    ['a short address', { network: 'ETH', address: '0x1234' }, 'invalid_address'],
    [
      'a checksum-invalid mixed-case address',
      { network: 'ETH', address: '0x098b716B8Aaf21512996dC57EB0615e2383E2f96' },
      'invalid_address_checksum',
    ],
    [
      'a TRON address that is not base58',
      { network: 'TRON', address: 'T0000000000000000000000000000000000' },
      'invalid_address',
    ],
    [
      'a TRON address with a wrong base58check checksum',
      { network: 'TRON', address: 'TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m8' },
      'invalid_address_checksum',
    ],
    ['a 20-byte EVM address sent as SUI', { network: 'SUI', address: FRESH }, 'invalid_address'],
    [
      'an address with a leading space',
      { network: 'ETH', address: ` ${FRESH}` },
      'invalid_address',
    ],
  ])('answers 400 for %s', async (_name, body, code) => {
    tick();
    const response = await audit.post('/v1/wallet-audit/check', body, premium);
    expect(response.status).toBe(400);
    expect(errorResponseSchema.parse(response.body).error).toBe(code);
    // The body is what /openapi.json declares for the route's 400, every member of it.
    expect(ROUTE_ERRORS.wallet[400].schema.strict().parse(response.body)).toEqual(response.body);
  });

  it('names the checksummed form of a wrong EIP-55 checksum on every route (`expected`, as the webhook API)', async () => {
    const typo = '0x70997970C51812dc3A010C7d01b50e0d17dC79C8';
    const expected = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
    const routes = [
      ['/v1/wallet-audit/check', 'address'],
      ['/v1/wallet-audit/audit', 'address'],
      ['/v1/rug-pull/check', 'contract_address'],
    ] as const;
    for (const [path, field] of routes) {
      tick();
      const response = await audit.post(path, { network: 'ETH', [field]: typo }, premium);
      expect([path, response.status, response.body]).toEqual([
        path,
        400,
        {
          error: `invalid_${field}_checksum`,
          message:
            `${field} has mixed case but an invalid EIP-55 checksum (a typo?); ` +
            `checksummed it is ${expected}, or give it all lower case`,
          field,
          expected,
          request_id: expect.any(String),
        },
      ]);
    }
  });

  it('refuses an unknown body field or any query parameter on every route, naming it, without spending a check', async () => {
    const free = (await billing.createAccount('free')).key;
    const routes = [
      ['/v1/wallet-audit/check', { network: 'ETH', address: FRESH }],
      ['/v1/wallet-audit/audit', { network: 'ETH', address: FRESH }],
      ['/v1/rug-pull/check', { network: 'ETH', contract_address: FRESH }],
    ] as const;
    for (const [path, body] of routes) {
      const extra = await audit.post(path, { ...body, chain_id: 1 }, free);
      expect([path, extra.status, errorResponseSchema.parse(extra.body)]).toEqual([
        path,
        400,
        {
          error: 'malformed_body',
          message: 'body: unknown field "chain_id"',
          request_id: expect.any(String),
        },
      ]);
      // The other product's address field is not taken for this one's.
      const other = 'address' in body ? 'contract_address' : 'address';
      const swapped = await audit.post(path, { ...body, [other]: FRESH }, free);
      expect([swapped.status, swapped.body.error, swapped.body.message]).toEqual([
        400,
        'malformed_body',
        `body: unknown field "${other}"`,
      ]);
      const query = await audit.post(`${path}?network=ETH&debug=1`, body, free);
      expect([path, query.status, errorResponseSchema.parse(query.body)]).toEqual([
        path,
        400,
        {
          error: 'invalid_query',
          message: 'query: unknown parameters "network", "debug"',
          request_id: expect.any(String),
        },
      ]);
    }
    const quota = (url: string) =>
      audit.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${free}` } });
    const refused = await quota('/v1/quota?day=today');
    expect([refused.statusCode, refused.json()]).toEqual([
      400,
      {
        error: 'invalid_query',
        message: 'query: unknown parameter "day"',
        location: 'query',
        path: 'query',
        request_id: expect.any(String),
      },
    ]);
    // Without a key the answer is still 401: the key is read first.
    const anonymous = await audit.app.inject({ method: 'GET', url: '/v1/quota?day=today' });
    expect(anonymous.statusCode).toBe(401);
    // Nothing above spent a check or a request of the Free plan's 1 per second.
    expect((await quota('/v1/quota')).json()).toMatchObject({ used: 0 });
    const valid = await audit.post('/v1/wallet-audit/check', routes[0][1], free);
    expect(valid.status).toBe(200);
  });

  it('flags an OFAC-sanctioned address with its sanctionData', async () => {
    tick();
    const response = await audit.post(
      '/v1/wallet-audit/check',
      { network: 'eth', address: SANCTIONED },
      premium,
    );
    expect(response.status).toBe(200);
    const { data } = walletCheckResponseSchema.parse(response.body);
    expect(data).toMatchObject({
      message: 'Success',
      walletAddress: SANCTIONED,
      status: 'Fraud',
      probabilityFraud: '1.0000000000',
      chain: 'ETH',
      token: null,
      checked_times: 1,
    });
    expect(data.forensic_details['sanctioned']).toBe('1');
    expect(data.forensic_details['mixer']).toBe('0');
    expect(data.forensic_details['data_source']).toContain('ofac-eth-ultrasoundmoney');
    expect(data.sanctionData.length).toBeGreaterThanOrEqual(1);
    const record = data.sanctionData.find((s) => s.name === 'LAZARUS GROUP')!;
    expect(record).toMatchObject({
      isSanctioned: true,
      category: 'OFAC SDN',
      url: 'https://sanctionssearch.ofac.treas.gov/',
    });
    expect(record.id).toEqual(expect.any(Number));
    expect(record.trustscore_id).toEqual(expect.any(Number));
    expect(data.lastChecked).toBe(clock.now().toISOString());
  });

  it('calls an address without history "New Address" with one clean sanction row', async () => {
    tick();
    const response = await audit.post(
      '/v1/wallet-audit/check',
      { network: 'ETH', address: FRESH },
      premium,
    );
    const { data } = walletCheckResponseSchema.parse(response.body);
    expect(data.status).toBe('New Address');
    expect(Number(data.probabilityFraud)).toBeLessThan(0.5);
    expect(
      Object.entries(data.forensic_details)
        .filter(([k]) => k !== 'data_source')
        .every(([, v]) => v === '0'),
    ).toBe(true);
    expect(data.forensic_details['data_source']).toBe('');
    expect(data.sanctionData).toEqual([
      expect.objectContaining({ isSanctioned: false, category: null, name: null }),
    ]);
  });

  it('counts every check of an address, concurrent ones included, and reuses the cached verdict', async () => {
    const address = '0x2222222222222222222222222222222222222222';
    tick();
    const first = walletCheckResponseSchema.parse(
      (await audit.post('/v1/wallet-audit/check', { network: 'ETH', address }, premium)).body,
    ).data;
    tick();
    const responses = await Promise.all(
      Array.from({ length: 12 }, () =>
        audit.post('/v1/wallet-audit/check', { network: 'ETH', address }, premium),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(12).fill(200));
    const counts = responses
      .map((r) => walletCheckResponseSchema.parse(r.body).data.checked_times)
      .sort((a, b) => a - b);
    expect(counts).toEqual(Array.from({ length: 12 }, (_, i) => i + 2));
    const last = walletCheckResponseSchema.parse(responses[0]!.body).data;
    expect(last.createdAt).toBe(first.createdAt);
    expect(last.updatedAt).toBe(clock.now().toISOString());
  });

  it('accepts chain codes in any case and BSC for BNB (label-only chain)', async () => {
    tick();
    const response = await audit.post(
      '/v1/wallet-audit/check',
      { network: 'bsc', address: SANCTIONED.toLowerCase() },
      premium,
    );
    const { data } = walletCheckResponseSchema.parse(response.body);
    expect([data.chain, data.status, data.forensic_details['sanctioned']]).toEqual([
      'BNB',
      'Fraud',
      '1',
    ]);
  });

  it('answers the full profile on /wallet-audit/audit', async () => {
    tick();
    const response = await audit.post(
      '/v1/wallet-audit/audit',
      { network: 'ETH', address: SANCTIONED },
      premium,
    );
    const { data } = walletAuditResponseSchema.parse(response.body);
    expect(data.categories).toContain('sanctioned');
    expect(data.riskProfile).toBe('High');
    expect(data.userDetails).toEqual({
      wallet_age_days: null,
      total_balance_usd: null,
      transaction_count: 0,
    });
    expect(data.recommendation).toMatch(/sanctions/);
  });

  // QA: native transfers from anvil account 2 to an address that never sent one made it
  // "New Address", experience "New", "no history yet" (its nonce is 0; its balance was ignored).
  it('does not call an address that only received native value new (nonce 0, a balance)', async () => {
    const receiver = '0x7777777777777777777777777777777777777777';
    for (let i = 0; i < 3; i += 1)
      await rpc('eth_sendTransaction', [
        // anvil account 2
        { from: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', to: receiver, value: '0x1' },
      ]);
    tick();
    const { data } = walletAuditResponseSchema.parse(
      (await audit.post('/v1/wallet-audit/audit', { network: 'ETH', address: receiver }, premium))
        .body,
    );
    expect(data.status).toBe('Not Fraud');
    expect(data.experience).toBe('Beginner');
    // The field counts sent transactions (the nonce), and the answer does not claim "no history".
    expect(data.userDetails.transaction_count).toBe(0);
    // Its age runs from the first value it received (its balance, which only grows while it
    // sends nothing, is above zero from that block on), not null for want of a sent one. The
    // blocks carry anvil's wall-clock times, later than the FakeClock's: 0 days.
    expect(data.userDetails.wallet_age_days).toBe(0);
    expect(data.recommendation).toBe(
      'No known risk; the address has received value but has not sent a transaction yet.',
    );
    const check = walletCheckResponseSchema.parse(
      (await audit.post('/v1/wallet-audit/check', { network: 'ETH', address: receiver }, premium))
        .body,
    ).data;
    expect(check.status).toBe('Not Fraud');
  });

  it('answers unknown where no node was read (BNB here): transaction_count null, Limited', async () => {
    tick();
    const response = await audit.post(
      '/v1/wallet-audit/audit',
      { network: 'BNB', address: FRESH },
      premium,
    );
    const { data } = walletAuditResponseSchema.parse(response.body);
    expect(data.userDetails.transaction_count).toBeNull();
    expect([data.experience, data.riskCapability]).toEqual(['Unknown', 'Limited']);
    expect(data.recommendation).not.toBe('No known risk.');
  });

  it('answers 502 when the node of the network is down, and gives the check back', async () => {
    tick();
    const response = await audit.post(
      '/v1/wallet-audit/check',
      { network: 'POLY', address: FRESH },
      premium,
    );
    expect(response.status).toBe(502);
    expect(errorResponseSchema.parse(response.body).error).toBe('upstream_unavailable');
  });

  it('enforces the Free plan: 1 request per second (429 + Retry-After) and 5 checks a day (402), reset at 07:30 UTC', async () => {
    const free = (await billing.createAccount('free')).key;
    clock.set('2026-03-03T07:00:00.000Z');
    const ok = await audit.post('/v1/wallet-audit/check', { network: 'ETH', address: FRESH }, free);
    expect(ok.status).toBe(200);
    const limited = await audit.post(
      '/v1/wallet-audit/check',
      { network: 'ETH', address: FRESH },
      free,
    );
    expect([limited.status, limited.body.error, limited.headers['retry-after']]).toEqual([
      429,
      'rate_limited',
      '1',
    ]);
    for (let i = 0; i < 4; i += 1) {
      tick();
      expect(
        (await audit.post('/v1/wallet-audit/check', { network: 'ETH', address: FRESH }, free))
          .status,
      ).toBe(200);
    }
    tick();
    const exhausted = await audit.post(
      '/v1/wallet-audit/check',
      { network: 'ETH', address: FRESH },
      free,
    );
    expect([exhausted.status, exhausted.body.error]).toEqual([402, 'quota_exhausted']);
    // As /openapi.json declares the 402: limit and resets_at, and nothing undeclared.
    expect(ROUTE_ERRORS.wallet[402].schema.strict().parse(exhausted.body)).toEqual({
      error: 'quota_exhausted',
      message: 'the daily audit quota of 5 checks is used up',
      limit: 5,
      resets_at: '2026-03-03T07:30:00.000Z',
      request_id: expect.any(String),
    });
    clock.set('2026-03-03T07:30:00.000Z');
    expect(
      (await audit.post('/v1/wallet-audit/check', { network: 'ETH', address: FRESH }, free)).status,
    ).toBe(200);
  });

  it('does not count a check that failed upstream (502) or named no contract (400) against the daily quota', async () => {
    const free = (await billing.createAccount('free')).key;
    clock.set('2026-03-04T09:00:00.000Z');
    expect(
      (await audit.post('/v1/wallet-audit/check', { network: 'POLY', address: FRESH }, free))
        .status,
    ).toBe(502);
    tick();
    expect(
      (await audit.post('/v1/rug-pull/check', { network: 'ETH', contract_address: FRESH }, free))
        .body.error,
    ).toBe('not_a_contract');
    for (let i = 0; i < 5; i += 1) {
      tick();
      expect(
        (await audit.post('/v1/wallet-audit/check', { network: 'ETH', address: FRESH }, free))
          .status,
      ).toBe(200);
    }
    tick();
    expect(
      (await audit.post('/v1/wallet-audit/check', { network: 'ETH', address: FRESH }, free)).status,
    ).toBe(402);
  });

  it('refuses malformed TRON, SUI and padded addresses without spending a check (QA report)', async () => {
    const free = (await billing.createAccount('free')).key;
    clock.set('2026-03-06T09:00:00.000Z');
    const refused: Array<[string, string, string]> = [
      ['TRON', 'TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m8', 'invalid_address_checksum'],
      ['TRON', 'TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9 ', 'invalid_address'],
      ['SUI', FRESH, 'invalid_address'],
      ['ETH', `${FRESH}\n`, 'invalid_address'],
    ];
    for (const [network, address, code] of refused) {
      tick();
      const response = await audit.post('/v1/wallet-audit/check', { network, address }, free);
      expect([network, address, response.status, response.body.error]).toEqual([
        network,
        address,
        400,
        code,
      ]);
    }
    // The whole daily quota (Free: 5) is still there; the valid TRON address is checked.
    for (let i = 0; i < 5; i += 1) {
      tick();
      const response = await audit.post(
        '/v1/wallet-audit/check',
        { network: 'tron', address: 'TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9' },
        free,
      );
      expect(response.status).toBe(200);
      expect(walletCheckResponseSchema.parse(response.body).data).toMatchObject({
        walletAddress: 'TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9',
        chain: 'TRON',
      });
    }
    tick();
    expect(
      (await audit.post('/v1/wallet-audit/check', { network: 'ETH', address: FRESH }, free)).status,
    ).toBe(402);
  });

  it('reuses a verdict for AUDIT_VERDICT_TTL_MS (10 min by default) while still counting checks; lastChecked says when it was computed', async () => {
    const address = '0x4444444444444444444444444444444444444444';
    clock.set('2026-03-05T09:00:00.000Z');
    const check = async () =>
      walletCheckResponseSchema.parse(
        (await audit.post('/v1/wallet-audit/check', { network: 'ETH', address }, premium)).body,
      ).data;
    const first = await check();
    expect([first.status, first.checked_times, first.lastChecked]).toEqual([
      'New Address',
      1,
      '2026-03-05T09:00:00.000Z',
    ]);
    // Nothing new on chain: within the TTL the cached verdict stands, and its lastChecked is when
    // it was computed, not now (QA L1: a reused answer said "now"); updatedAt is this check's.
    clock.advance(4 * 60_000);
    const cached = await check();
    expect([cached.status, cached.checked_times, cached.lastChecked, cached.updatedAt]).toEqual([
      'New Address',
      2,
      '2026-03-05T09:00:00.000Z',
      '2026-03-05T09:04:00.000Z',
    ]);
    // The address gets history of its own (its nonce moves): the next check, inside the TTL,
    // computes afresh, as /wallet-audit/audit would (QA L1: the cached verdict was served).
    await fetch(anvil.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'anvil_setNonce',
        params: [address, '0x5'],
      }),
    });
    clock.advance(60_000);
    const fresh = await check();
    expect([fresh.status, fresh.checked_times, fresh.lastChecked]).toEqual([
      'Not Fraud',
      3,
      '2026-03-05T09:05:00.000Z',
    ]);
    const profile = walletAuditResponseSchema.parse(
      (await audit.post('/v1/wallet-audit/audit', { network: 'ETH', address }, premium)).body,
    ).data;
    expect(profile.status).toBe(fresh.status);
  });

  // QA: the cache key (nonce, balance) does not move when tokens arrive, so a token transfer to
  // an address waited out the TTL. The reuse now asks for transfers since the head it read.
  it('answers afresh, inside the TTL, after a token transfer to the address (its nonce and balance unmoved)', async () => {
    const address = '0x8888888888888888888888888888888888888888';
    clock.set('2026-03-05T10:00:00.000Z');
    const check = async () =>
      walletCheckResponseSchema.parse(
        (await audit.post('/v1/wallet-audit/check', { network: 'ETH', address }, premium)).body,
      ).data;
    const first = await check();
    expect([first.status, first.lastChecked]).toEqual(['New Address', '2026-03-05T10:00:00.000Z']);
    clock.advance(60_000);
    expect((await check()).lastChecked).toBe('2026-03-05T10:00:00.000Z');
    // A contract whose creation emits Transfer(anvil account 2 → address): LOG3 of the event's
    // topic, the sender and the recipient (padded), no data.
    const word = (hex: string) => hex.replace(/^0x/, '').padStart(64, '0');
    const transferTopic = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
    await rpc('eth_sendTransaction', [
      {
        from: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
        data:
          `0x7f${word(address)}7f${word('0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC')}` +
          `7f${transferTopic}60006000a300`,
      },
    ]);
    clock.advance(60_000);
    const fresh = await check();
    expect([fresh.status, fresh.lastChecked]).toEqual(['Not Fraud', '2026-03-05T10:02:00.000Z']);
    // Its age runs from that transfer (the first activity in the window), not null for want of
    // a sent transaction (anvil's wall-clock block time is later than the FakeClock's: 0 days).
    const profile = walletAuditResponseSchema.parse(
      (await audit.post('/v1/wallet-audit/audit', { network: 'ETH', address }, premium)).body,
    ).data;
    expect(profile.userDetails.wallet_age_days).toBe(0);
    // Nothing since: reused again.
    clock.advance(60_000);
    expect((await check()).lastChecked).toBe('2026-03-05T10:02:00.000Z');
  });

  // A mixer's withdrawal names its recipient in the event's data (no log filter finds it), but it
  // pays the recipient: the balance in the verdict's version moves, so the next check inside
  // the TTL reads afresh and finds it (an ERC-20 pool's payment is a Transfer: the case above).
  it('answers afresh, inside the TTL, after a Tornado pool withdrawal to the address (mixer)', async () => {
    const address = '0x7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a';
    clock.set('2026-03-05T12:00:00.000Z');
    const check = async () =>
      walletCheckResponseSchema.parse(
        (await audit.post('/v1/wallet-audit/check', { network: 'ETH', address }, premium)).body,
      ).data;
    const first = await check();
    expect([first.status, first.forensic_details['mixer']]).toEqual(['New Address', '0']);
    // The pool at a real Tornado Cash address of the label packs, funded, as in the scenarios.
    const pool = fixture('MockTornadoPool');
    await rpc('anvil_setCode', [TORNADO_POOL, pool.deployedBytecode]);
    await rpc('anvil_setBalance', [TORNADO_POOL, toHex(parseEther('1'))]);
    await rpc('eth_sendTransaction', [
      {
        from: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
        to: TORNADO_POOL,
        data: encodeFunctionData({
          abi: pool.abi,
          functionName: 'withdraw',
          args: [address, keccak256('0x02')],
        }),
      },
    ]);
    clock.advance(60_000);
    const fresh = await check();
    expect([
      fresh.status,
      fresh.forensic_details['mixer'],
      fresh.forensic_details['money_laundering'],
      fresh.lastChecked,
    ]).toEqual(['Fraud', '1', '1', '2026-03-05T12:01:00.000Z']);
  });

  // QA: a label added by a reload of the packs waited out the TTL (the key did not move).
  it('answers afresh, inside the TTL, once the label packs are reloaded with a label for it', async () => {
    const address = '0x9999999999999999999999999999999999999999';
    clock.set('2026-03-05T11:00:00.000Z');
    const check = async () =>
      walletCheckResponseSchema.parse(
        (await audit.post('/v1/wallet-audit/check', { network: 'ETH', address }, premium)).body,
      ).data;
    const first = await check();
    expect([first.status, first.forensic_details['phishing_activities']]).toEqual([
      'New Address',
      '0',
    ]);
    await loadOneLabel(audit, { address, category: 'phishing', name: 'Fake airdrop' });
    clock.advance(60_000);
    const fresh = await check();
    expect([
      fresh.status,
      fresh.forensic_details['phishing_activities'],
      fresh.forensic_details['data_source'],
      fresh.lastChecked,
    ]).toEqual(['Fraud', '1', 'qa-reload', '2026-03-05T11:01:00.000Z']);
  });

  // Last: it stops the node. QA UU: keying the cache by the address's nonce and balance made a
  // check inside the TTL read the node, so with the node down it answered 502 where the
  // verdict computed minutes before used to be served.
  it('with the node down, a verdict computed within the TTL is served (lastChecked says when); an address without one is 502 upstream_unavailable', async () => {
    const address = '0x5555555555555555555555555555555555555555';
    const unseen = '0x6666666666666666666666666666666666666666';
    clock.set('2026-03-06T09:00:00.000Z');
    const check = (a: string) =>
      audit.post('/v1/wallet-audit/check', { network: 'ETH', address: a }, premium);
    const first = walletCheckResponseSchema.parse((await check(address)).body).data;
    expect(first.stale).toBe(false);
    await anvil.stop();
    clock.advance(3 * 60_000);
    const down = await check(address);
    expect(down.status).toBe(200);
    const served = walletCheckResponseSchema.parse(down.body).data;
    // The answer says it was not confirmed against the chain (QA: it looked like a fresh one).
    expect([served.status, served.checked_times, served.lastChecked, served.stale]).toEqual([
      first.status,
      2,
      '2026-03-06T09:00:00.000Z',
      true,
    ]);
    const none = await check(unseen);
    expect(none.status).toBe(502);
    expect(errorResponseSchema.parse(none.body).error).toBe('upstream_unavailable');
    // Past the TTL the node's failure is the answer for the cached address too.
    clock.advance(10 * 60_000);
    expect((await check(address)).status).toBe(502);
  });
});
