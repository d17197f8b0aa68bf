import { clearedSessionCookie, readCookie, sessionCookie } from './session-cookie';

describe('session cookie', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['mrd_session=abc', 'abc'],
    ['a=1; mrd_session=abc-_9; b=2', 'abc-_9'],
    ['mrd_session_x=1; mrd_session=two', 'two'],
    ['mrd_session="quoted"', 'quoted'],
    ['mrd_session=%E0%A4%A', undefined],
    ['novalue; mrd_session=x', 'x'],
  ])('reads %p as %p', (header, expected) => {
    expect(readCookie(header, 'mrd_session')).toBe(expected);
  });

  it('writes an httpOnly, SameSite=Strict cookie, Secure unless told otherwise', () => {
    const expires = new Date('2026-03-09T08:00:00.000Z');
    expect(sessionCookie('v', expires, true)).toBe(
      'mrd_session=v; Path=/; Expires=Mon, 09 Mar 2026 08:00:00 GMT; HttpOnly; SameSite=Strict; Secure',
    );
    expect(sessionCookie('v', expires, false)).not.toContain('Secure');
    expect(clearedSessionCookie(true)).toMatch(/^mrd_session=; Path=\/; Expires=Thu, 01 Jan 1970/);
  });
});
