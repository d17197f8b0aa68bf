import {
  livePreviousSecrets,
  MAX_PREVIOUS_SECRETS,
  planRotation,
  ROTATION_OVERLAP_MS,
} from './secret-rotation';

const t0 = new Date('2026-11-30T12:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const MIN = 60_000;

describe('secret rotation overlap', () => {
  it('a second rotation keeps the first previous secret until its own expiry', () => {
    const first = planRotation('s0', [], t0, false);
    expect(first).toEqual({
      ok: true,
      previous: [{ sealed: 's0', expiresAt: at(ROTATION_OVERLAP_MS) }],
    });
    const second = planRotation('s1', first.ok ? first.previous : [], at(7 * MIN), false);
    expect(second).toEqual({
      ok: true,
      previous: [
        { sealed: 's1', expiresAt: at(7 * MIN + ROTATION_OVERLAP_MS) },
        { sealed: 's0', expiresAt: at(ROTATION_OVERLAP_MS) },
      ],
    });
  });

  it(`refuses a rotation beyond ${MAX_PREVIOUS_SECRETS} live previous secrets, naming when the earliest ends`, () => {
    const live = [1, 2, 3].map((i) => ({ sealed: `s${i}`, expiresAt: at(i * MIN) }));
    expect(planRotation('c', live, t0, false)).toEqual({
      ok: false,
      live: [...live].reverse(),
      nextRotationAt: at(MIN),
    });
    // once the earliest has expired there is room again; the expired one is gone
    const after = planRotation('c', live, at(MIN), false);
    expect(after.ok && after.previous.map((s) => s.sealed)).toEqual(['c', 's3', 's2']);
  });

  it('expire_previous ends every previous secret, also at the cap', () => {
    const live = [1, 2, 3].map((i) => ({ sealed: `s${i}`, expiresAt: at(i * MIN) }));
    expect(planRotation('c', live, t0, true)).toEqual({ ok: true, previous: [] });
  });

  it.each([
    ['expired ones dropped', [{ sealed: 'a', expiresAt: t0 }], []],
    [
      'latest expiry first, one per sealed value',
      [
        { sealed: 'a', expiresAt: at(1) },
        { sealed: 'b', expiresAt: at(3) },
        { sealed: 'a', expiresAt: at(1) },
      ],
      ['b', 'a'],
    ],
  ])('live previous secrets: %s', (_name, given, sealed) => {
    expect(livePreviousSecrets(given, t0).map((s) => s.sealed)).toEqual(sealed);
  });
});
