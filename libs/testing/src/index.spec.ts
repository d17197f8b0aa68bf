import { FakeClock as TimeFakeClock, MINUTE } from '@meridian/time';
import { FakeClock } from './index';

describe('@meridian/testing re-exports', () => {
  it('FakeClock is the one from @meridian/time', () => {
    expect(FakeClock).toBe(TimeFakeClock);
    const clock = new FakeClock('2026-01-01T07:29:00.000Z');
    expect(clock.advance(MINUTE).toISOString()).toBe('2026-01-01T07:30:00.000Z');
  });
});
