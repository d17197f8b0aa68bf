import { keyHolderOf, revocationOutcomeOf, type OperatorKey } from './operator-keys';

const key = (over: Partial<OperatorKey>): OperatorKey => ({
  id: 'key_a',
  name: 'initial',
  scopes: ['account', 'audit', 'webhooks'],
  hint: 'mrd_…abcd',
  created_at: '2026-11-30T09:00:00.000Z',
  managed: false,
  revoked_at: null,
  dashboard_key: false,
  dashboard_user: null,
  ...over,
});

describe('the operator page of an account key', () => {
  it.each([
    [key({}), "The account's key"],
    [key({ managed: true, dashboard_key: true }), 'Dashboard key'],
    [
      key({ managed: true, dashboard_key: true, dashboard_user: 'ann@example.com' }),
      'Dashboard key of ann@example.com',
    ],
  ])('names who holds %#', (k, label) => {
    expect(keyHolderOf(k)).toBe(label);
  });

  it("tells that the dashboard's key is renewed at the user's next visit, and no other", () => {
    const own = key({});
    const dashboard = key({
      managed: true,
      dashboard_key: true,
      dashboard_user: 'ann@example.com',
    });
    expect(revocationOutcomeOf(own, false)).toBe(
      'Requests with key mrd_…abcd are refused from now on.',
    );
    expect(revocationOutcomeOf(own, true)).toBe(
      'Key mrd_…abcd is revoked: requests with it are refused.',
    );
    expect(revocationOutcomeOf(dashboard, false)).toContain(
      'the dashboard makes ann@example.com a new one at their next visit',
    );
    expect(revocationOutcomeOf(dashboard, true)).toBe(
      'Key mrd_…abcd is revoked: requests with it are refused. The dashboard makes ' +
        'ann@example.com a new key at their next visit.',
    );
    expect(revocationOutcomeOf(key({ managed: true, dashboard_key: true }), true)).toContain(
      'makes its user a new key',
    );
  });
});
