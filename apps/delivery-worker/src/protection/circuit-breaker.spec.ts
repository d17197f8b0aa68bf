import { FakeClock, MINUTE, SECOND } from '@meridian/time';
import { CircuitBreaker } from './circuit-breaker';

function fail(breaker: CircuitBreaker, clock: FakeClock, n: number, ok = false): void {
  for (let i = 0; i < n; i += 1) {
    expect(breaker.admit(clock.now().getTime())).toBe('send');
    breaker.record(clock.now().getTime(), ok, 'send');
    clock.advance(100);
  }
}

describe('CircuitBreaker (COMPAT: >90 % failed over 2 min with ≥ 20 attempts → open 5 min → one probe)', () => {
  it('says what an outcome changed: opened by the window, reopened by a failed probe, closed by a good one', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker();
    const changes: Array<string | undefined> = [];
    for (let i = 0; i < 20; i += 1) {
      breaker.admit(clock.now().getTime());
      changes.push(breaker.record(clock.now().getTime(), false, 'send'));
    }
    expect(changes.slice(0, 19).every((change) => change === undefined)).toBe(true);
    expect(changes[19]).toBe('opened');
    clock.advance(5 * MINUTE);
    expect(breaker.admit(clock.now().getTime())).toBe('probe');
    expect(breaker.record(clock.now().getTime(), false, 'probe')).toBe('reopened');
    clock.advance(5 * MINUTE);
    expect(breaker.admit(clock.now().getTime())).toBe('probe');
    expect(breaker.record(clock.now().getTime(), true, 'probe')).toBe('closed');
    expect(breaker.record(clock.now().getTime(), false, 'send')).toBeUndefined();
  });

  it('stays closed below 20 attempts even if all failed', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker();
    fail(breaker, clock, 19);
    expect(breaker.stateAt(clock.now().getTime())).toBe('closed');
  });

  it('opens at the 20th attempt when all failed, skips for 5 min, then lets one probe through', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker();
    fail(breaker, clock, 20);
    const openedAt = clock.now().getTime() - 100;
    expect(breaker.stateAt(clock.now().getTime())).toBe('open');
    expect(breaker.admit(clock.now().getTime())).toBe('skip');
    clock.set(openedAt + 5 * MINUTE - 1);
    expect(breaker.admit(clock.now().getTime())).toBe('skip');
    clock.set(openedAt + 5 * MINUTE);
    expect(breaker.admit(clock.now().getTime())).toBe('probe');
    // Only one probe while it is out.
    expect(breaker.admit(clock.now().getTime())).toBe('skip');
  });

  it('does not open at exactly 90 % failed (more than 90 % is the rule)', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker();
    fail(breaker, clock, 2, true);
    fail(breaker, clock, 18);
    expect(breaker.stateAt(clock.now().getTime())).toBe('closed');
    fail(breaker, clock, 1);
    expect(breaker.stateAt(clock.now().getTime())).toBe('open');
  });

  it('forgets attempts older than 2 min', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker();
    fail(breaker, clock, 15);
    clock.advance(2 * MINUTE);
    fail(breaker, clock, 15);
    expect(breaker.stateAt(clock.now().getTime())).toBe('closed');
  });

  it('a failed probe opens it for another 5 min; a good probe closes it with a clean window', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker();
    fail(breaker, clock, 20);
    clock.advance(5 * MINUTE);
    expect(breaker.admit(clock.now().getTime())).toBe('probe');
    breaker.record(clock.now().getTime(), false, 'probe');
    expect(breaker.admit(clock.now().getTime())).toBe('skip');
    clock.advance(5 * MINUTE);
    expect(breaker.admit(clock.now().getTime())).toBe('probe');
    breaker.record(clock.now().getTime(), true, 'probe');
    expect(breaker.stateAt(clock.now().getTime())).toBe('closed');
    // Clean window: 19 new failures do not reopen it.
    fail(breaker, clock, 19);
    expect(breaker.stateAt(clock.now().getTime())).toBe('closed');
  });

  it('a probe that was never sent frees the probe slot', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker();
    fail(breaker, clock, 20);
    clock.advance(5 * MINUTE + SECOND);
    expect(breaker.admit(clock.now().getTime())).toBe('probe');
    breaker.release('probe');
    expect(breaker.admit(clock.now().getTime())).toBe('probe');
  });

  it('an owner resume after the opening makes the next attempt the probe, once per resume', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker();
    fail(breaker, clock, 20);
    const openedAt = clock.now().getTime() - 100;
    clock.advance(MINUTE);
    // A resume before the breaker opened says nothing about the failures since.
    breaker.resumed(openedAt - 1);
    expect(breaker.admit(clock.now().getTime())).toBe('skip');
    const resumedAt = clock.now().getTime();
    breaker.resumed(resumedAt);
    expect(breaker.stateAt(clock.now().getTime())).toBe('half_open');
    expect(breaker.admit(clock.now().getTime())).toBe('probe');
    expect(breaker.admit(clock.now().getTime())).toBe('skip');
    // The probe fails: open for 5 min as usual; the same resume seen again gives no second probe,
    // even when the matcher's clock was ahead of the worker's (resume after the reopening).
    breaker.record(clock.now().getTime() - 10, false, 'probe');
    breaker.resumed(resumedAt);
    expect(breaker.admit(clock.now().getTime())).toBe('skip');
    // A new resume does.
    clock.advance(SECOND);
    breaker.resumed(clock.now().getTime());
    expect(breaker.admit(clock.now().getTime())).toBe('probe');
    breaker.record(clock.now().getTime(), true, 'probe');
    expect(breaker.stateAt(clock.now().getTime())).toBe('closed');
    // Closed: a resume changes nothing.
    breaker.resumed(clock.now().getTime() + SECOND);
    expect(breaker.admit(clock.now().getTime())).toBe('send');
  });
});
