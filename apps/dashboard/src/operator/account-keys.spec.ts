import { withKeyHolders, type BillingAccountKey } from './account-keys';

const key = (
  id: string,
  managed: boolean,
  revoked_at: string | null = null,
): BillingAccountKey => ({
  id,
  name: id,
  scopes: ['account'],
  hint: `mrd_…${id}`,
  created_at: '2026-11-30T09:00:00.000Z',
  managed,
  revoked_at,
});

describe('withKeyHolders', () => {
  it("names the user whose dashboard key it is, and marks the dashboard's keys", () => {
    const keys = [
      key('key_renewed', true),
      key('key_old', true, '2026-11-30T08:00:00.000Z'),
      key('key_ci', false),
      key('key_before_flag', false),
    ];
    const holders = [
      { email: 'ann@example.com', apiKeyId: 'key_renewed' },
      { email: 'bob@example.com', apiKeyId: 'key_before_flag' },
    ];
    expect(
      withKeyHolders(keys, holders).map((k) => [k.id, k.dashboard_key, k.dashboard_user]),
    ).toEqual([
      // The key the dashboard holds for ann now.
      ['key_renewed', true, 'ann@example.com'],
      // Managed, but no user's key any more (revoked and renewed): the dashboard's, user unknown.
      ['key_old', true, null],
      // The account's own key.
      ['key_ci', false, null],
      // Not flagged yet (made before the flag), but a user's row holds it: the dashboard's.
      ['key_before_flag', true, 'bob@example.com'],
    ]);
  });

  it('keeps billing fields as they are', () => {
    const [one] = withKeyHolders([key('key_a', false, '2026-11-30T08:00:00.000Z')], []);
    expect(one).toEqual({
      ...key('key_a', false, '2026-11-30T08:00:00.000Z'),
      dashboard_key: false,
      dashboard_user: null,
    });
  });
});
