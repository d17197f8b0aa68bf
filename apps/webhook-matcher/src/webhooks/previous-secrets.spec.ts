import {
  livePreviousSecretsOf,
  previousSecretsOf,
  previousSecretsParams,
} from './previous-secrets';

const at = (iso: string) => new Date(iso);

describe('previous secrets as a webhook row stores them', () => {
  it('round-trips: the columns hold the latest, the list every one', () => {
    const previous = [
      { sealed: 'v2.k.b', expiresAt: at('2026-12-02T00:00:00.000Z') },
      { sealed: 'v2.k.a', expiresAt: at('2026-12-01T00:00:00.000Z') },
    ];
    const [sealed, expiresAt, list] = previousSecretsParams(previous);
    expect([sealed, expiresAt]).toEqual(['v2.k.b', previous[0]!.expiresAt]);
    const row = {
      previous_secret_sealed: sealed,
      previous_secret_expires_at: expiresAt,
      previous_secrets: JSON.parse(list) as Array<{ sealed: string; expires_at: string }>,
    };
    expect(previousSecretsOf(row)).toEqual(previous);
    expect(previousSecretsParams([])).toEqual([null, null, '[]']);
  });

  it('a rotation by a pod of the release before the list (columns only) is merged in', () => {
    const row = {
      // the old pod moved the current secret into the columns, the list is as we left it
      previous_secret_sealed: 'v2.k.c',
      previous_secret_expires_at: at('2026-12-03T00:00:00.000Z'),
      previous_secrets: [
        { sealed: 'v2.k.b', expires_at: '2026-12-02T00:00:00.000Z' },
        { sealed: 'v2.k.a', expires_at: '2026-12-01T00:00:00+00:00' },
      ],
    };
    expect(livePreviousSecretsOf(row, at('2026-12-01T12:00:00.000Z')).map((s) => s.sealed)).toEqual(
      ['v2.k.c', 'v2.k.b'],
    );
  });

  it('a row from before the migration reads as its one previous secret', () => {
    const row = {
      previous_secret_sealed: 'v1.a',
      previous_secret_expires_at: at('2026-12-01T00:00:00.000Z'),
      previous_secrets: null,
    };
    expect(previousSecretsOf(row)).toEqual([
      { sealed: 'v1.a', expiresAt: at('2026-12-01T00:00:00.000Z') },
    ]);
  });
});
