import {
  previousSecretLines,
  ROTATION_RULE,
  rotationNotice,
  rotationRefusal,
  STOP_OLD_SECRETS_LABEL,
} from './secret-rotation';

const t1 = '2026-12-01T13:39:47.839Z';
const t2 = '2026-12-01T14:05:12.001Z';
const t3 = '2026-12-01T15:00:00.000Z';

describe('rotationRefusal', () => {
  const body = {
    error: 'too_many_previous_secrets',
    message:
      '3 previous secrets still sign (at most 3); rotate again after 2026-12-01T13:39:47.839Z, ' +
      'or with expire_previous: true to end them all now',
    next_rotation_at: t1,
    previous_secrets_expire_at: [t3, t2, t1],
  };

  it('says the 409 in words, with the page date format, pointing at the checkbox', () => {
    expect(rotationRefusal('too_many_previous_secrets', body)).toBe(
      'Not rotated: three old secrets still sign, the most a webhook keeps at once. Rotate ' +
        'again after 2026-12-01 13:39 UTC, when the earliest stops, or tick “Stop the old ' +
        'secrets now” in the rotation dialog to end them all now (deliveries then carry only ' +
        'the new signature).',
    );
  });

  it('names no API field and no ISO stamp', () => {
    const text = rotationRefusal('too_many_previous_secrets', body)!;
    expect(text).not.toMatch(/expire_previous|next_rotation_at|T\d\d:\d\d|\.\d{3}Z/);
    expect(text).toContain(STOP_OLD_SECRETS_LABEL.replace(/ \(.*\)$/, ''));
  });

  it('without next_rotation_at still says when, in words', () => {
    expect(rotationRefusal('too_many_previous_secrets', { error: 'x' })).toMatch(
      /^Not rotated: three old secrets still sign, .* Rotate again once the earliest stops, /,
    );
  });

  it('leaves any other refusal to the page’s usual mapping', () => {
    expect(rotationRefusal('cap_active_webhooks_exceeded', body)).toBeUndefined();
    expect(rotationRefusal('webhook_not_found', {})).toBeUndefined();
  });
});

describe('rotationNotice', () => {
  it('one old secret: until when', () => {
    expect(
      rotationNotice({ previous_secret_expires_at: t1, previous_secrets_expire_at: [t1] }),
    ).toBe('The old secret keeps signing alongside it until 2026-12-01 13:39 UTC.');
  });

  it('two and three old secrets: how many, and until when each', () => {
    expect(
      rotationNotice({ previous_secret_expires_at: t2, previous_secrets_expire_at: [t2, t1] }),
    ).toBe(
      '2 old secrets keep signing alongside it: the one just replaced until 2026-12-01 14:05 ' +
        'UTC, the one before until 2026-12-01 13:39 UTC.',
    );
    expect(
      rotationNotice({ previous_secret_expires_at: t3, previous_secrets_expire_at: [t3, t2, t1] }),
    ).toBe(
      '3 old secrets keep signing alongside it: the one just replaced until 2026-12-01 15:00 ' +
        'UTC, the older ones until 2026-12-01 14:05 UTC and 2026-12-01 13:39 UTC. That is the ' +
        'most that sign at once: the next rotation is taken after 2026-12-01 13:39 UTC, or ' +
        'with “Stop the old secrets now”.',
    );
  });

  it('expire_previous: none signs', () => {
    expect(
      rotationNotice({ previous_secret_expires_at: null, previous_secrets_expire_at: [] }),
    ).toBe('The old secrets no longer sign: deliveries carry only the new signature.');
  });

  it('an answer of a release before the list: the one announced expiry', () => {
    expect(rotationNotice({ previous_secret_expires_at: t1 })).toBe(
      'The old secret keeps signing alongside it until 2026-12-01 13:39 UTC.',
    );
  });
});

describe('previousSecretLines', () => {
  it('one line per old secret, latest first, in the page date format', () => {
    expect(previousSecretLines([t1, t3, t2])).toEqual([
      'signs until 2026-12-01 15:00 UTC',
      'signs until 2026-12-01 14:05 UTC',
      'signs until 2026-12-01 13:39 UTC',
    ]);
  });

  it('none (empty, or a webhook object of a release before the field)', () => {
    expect(previousSecretLines([])).toEqual(['none: only the current secret signs']);
    expect(previousSecretLines(undefined)).toEqual(['none: only the current secret signs']);
  });
});

describe('ROTATION_RULE', () => {
  it('states 24 h each, the limit of 3 and what the checkbox does', () => {
    expect(ROTATION_RULE).toContain('24 hours from the rotation that replaced it');
    expect(ROTATION_RULE).toContain('at most 3 old secrets sign at once');
    expect(ROTATION_RULE).toContain('“Stop the old secrets now” ends them all');
  });
});
