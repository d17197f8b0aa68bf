import { passedHeaders } from '../upstream/upstream.client';
import { relayRuleFor } from './relay-rules';

describe('relayRuleFor', () => {
  it.each([
    ['billing', 'GET', '/account/usage'],
    ['billing', 'POST', '/access-tokens/tok_1/roll'],
    ['webhooks', 'POST', '/webhooks/wh_abc/resume'],
    ['webhooks', 'POST', '/webhooks/wh_abc/deliveries/ev_0123abcdef/replay'],
    ['webhooks', 'POST', '/address-lists/al_1/entries/remove'],
    ['audit', 'GET', '/quota'],
  ] as const)('lets %s %s %s through', (upstream, method, path) => {
    expect(relayRuleFor(upstream, method, path)).toBeDefined();
  });

  it.each([
    ['billing', 'POST', '/admin/accounts'],
    ['billing', 'PUT', '/admin/accounts/acc_1/plan'],
    ['billing', 'GET', '/api-keys'],
    ['billing', 'DELETE', '/account'],
    ['billing', 'GET', '/access-tokens/../admin/accounts'],
    ['webhooks', 'GET', '/webhooks/wh_1/../../admin'],
    ['webhooks', 'GET', '/webhooks/wh_1/deliveries/ev_1/replay'],
    ['webhooks', 'POST', '/webhooks/wh_1/deliveries/../../replay'],
    ['webhooks', 'POST', '/webhooks/wh_1/replay'],
    ['audit', 'GET', '/wallet-audit/check'],
  ] as const)('refuses %s %s %s', (upstream, method, path) => {
    expect(relayRuleFor(upstream, method, path)).toBeUndefined();
  });
});

describe('owner-only relay routes (QA: any member changed the plan)', () => {
  it('marks the plan change, and only it, as an owner action; top-ups stay open to members', () => {
    expect(relayRuleFor('billing', 'PUT', '/account/plan')?.ownerOnly).toBe('changes its plan');
    expect(relayRuleFor('billing', 'POST', '/top-ups')?.ownerOnly).toBeUndefined();
    expect(relayRuleFor('billing', 'GET', '/account')?.ownerOnly).toBeUndefined();
  });
});

describe('passedHeaders', () => {
  it("passes the page's Idempotency-Key and If-Match on, nothing else of its request", () => {
    expect(
      passedHeaders({
        'idempotency-key': 'k1',
        'if-match': '"3"',
        cookie: 'mrd_session=s',
        'x-csrf-token': 't',
        authorization: 'Bearer x',
      }),
    ).toEqual({ 'idempotency-key': 'k1', 'if-match': '"3"' });
    expect(passedHeaders({ 'if-match': ['"1"', '"2"'] })).toEqual({});
  });
});
