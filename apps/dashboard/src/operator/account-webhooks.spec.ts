import { DomainError } from '@meridian/errors';
import {
  deliveryLogPath,
  operatorReadRefusal,
  operatorWebhookView,
  rawQuery,
  type MatcherWebhook,
} from './account-webhooks';

const webhook = (over: Partial<MatcherWebhook> = {}): MatcherWebhook => ({
  id: 'wh_abcdefghijklmnopqrstuvwx',
  name: 'Treasury',
  status: 'active',
  status_label: 'Active',
  network: 'eth-mainnet',
  trigger_type: 'address_activity',
  target_url: 'https://hooks.example.com:8443/in/s3cret-path?token=t',
  version: 3,
  created_at: '2026-12-01T00:00:00.000Z',
  updated_at: '2026-12-02T00:00:00.000Z',
  ...over,
});

describe("the operator's read of an account's webhooks", () => {
  it('shows the target host only, never its path or query', () => {
    const view = operatorWebhookView(webhook());
    expect(view.target_host).toBe('hooks.example.com:8443');
    expect(JSON.stringify(view)).not.toContain('s3cret');
  });

  it.each([
    ['active', null],
    ['paused', 'owner_paused'],
    ['paused_auto', 'auto_paused'],
    ['paused_plan', 'plan_paused'],
    ['paused_no_balance', 'no_balance'],
    ['deleted', null],
    ['a status of a newer matcher', null],
  ])('names why a %s webhook is paused: %s', (status, reason) => {
    expect(operatorWebhookView(webhook({ status })).paused_reason).toBe(reason);
  });

  it("reads a log only where the customer's relay would, else 404", () => {
    expect(deliveryLogPath('acc_1', 'wh_abc')).toBe(
      '/admin/accounts/acc_1/webhooks/wh_abc/deliveries',
    );
    for (const id of ['..', 'wh_a/../../x', 'wh a', 'x'.repeat(101)])
      expect(() => deliveryLogPath('acc_1', id)).toThrow(
        expect.objectContaining({ code: 'not_found', kind: 'not_found' }),
      );
  });

  it('passes the query on as sent', () => {
    expect(rawQuery('/api/x?outcome=success,failure&since=2026-12-01T00%3A00%3A00Z')).toBe(
      'outcome=success,failure&since=2026-12-01T00%3A00%3A00Z',
    );
    expect(rawQuery('/api/x')).toBeUndefined();
    expect(rawQuery('/api/x?')).toBeUndefined();
  });

  it("keeps the matcher's code, words and path of a client's mistake; its refusal of the operator token is 503", () => {
    const bad = operatorReadRefusal({
      status: 400,
      body: {
        error: 'invalid_query',
        message: 'query: since is after until',
        location: 'query',
        path: 'query.since',
      },
    });
    expect([bad.code, bad.kind, bad.message, bad.details]).toEqual([
      'invalid_query',
      'invalid',
      'query: since is after until',
      { location: 'query', path: 'query.since' },
    ]);
    const missing = operatorReadRefusal({ status: 404, body: { error: 'not_found' } });
    expect([missing.code, missing.kind]).toEqual(['not_found', 'not_found']);
    const token = operatorReadRefusal({ status: 401, body: { error: 'unauthorized' } });
    expect(token).toBeInstanceOf(DomainError);
    expect([token.code, token.kind]).toEqual(['upstream_unavailable', 'unavailable']);
  });
});
