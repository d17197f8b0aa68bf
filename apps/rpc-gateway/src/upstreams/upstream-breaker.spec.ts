import { UpstreamBreaker } from './upstream-breaker';

describe('UpstreamBreaker (ADR 0202 amendment, "Breaker")', () => {
  const settings = { failures: 3, cooldownMs: 5_000, maxCooldownMs: 12_000 };

  it('opens after that many failed attempts in a row; an answer in between starts the count again', () => {
    const breaker = new UpstreamBreaker(settings);
    expect(breaker.record(0, false, 'send')).toBeUndefined();
    expect(breaker.record(0, false, 'send')).toBeUndefined();
    expect(breaker.record(0, true, 'send')).toBeUndefined();
    expect(breaker.record(0, false, 'send')).toBeUndefined();
    expect(breaker.record(0, false, 'send')).toBeUndefined();
    expect(breaker.stateAt(0)).toBe('closed');
    expect(breaker.record(1_000, false, 'send')).toBe('opened');
    expect(breaker.stateAt(1_000)).toBe('open');
    expect(breaker.mayTry(5_999)).toBe(false);
    expect(breaker.admit(5_999)).toBeUndefined();
  });

  it('after the cooldown lets one trial through; its answer closes the breaker', () => {
    const breaker = new UpstreamBreaker(settings);
    for (let i = 0; i < 3; i++) breaker.record(0, false, 'send');
    expect(breaker.stateAt(5_000)).toBe('half_open');
    expect(breaker.mayTry(5_000)).toBe(true);
    expect(breaker.admit(5_000)).toBe('trial');
    // One trial at a time; attempts sent before it opened finishing now change nothing.
    expect(breaker.mayTry(5_001)).toBe(false);
    expect(breaker.admit(5_001)).toBeUndefined();
    expect(breaker.record(5_002, false, 'send')).toBeUndefined();
    expect(breaker.record(5_003, true, 'trial')).toBe('closed');
    expect(breaker.admit(5_003)).toBe('send');
    // Closed afresh: three more failures to open again, with the first cooldown.
    expect(breaker.record(5_004, false, 'send')).toBeUndefined();
    expect(breaker.record(5_004, false, 'send')).toBeUndefined();
    expect(breaker.record(5_004, false, 'send')).toBe('opened');
    expect(breaker.cooldownMs).toBe(5_000);
  });

  it('a failed trial reopens it for a doubled cooldown, up to the max', () => {
    const breaker = new UpstreamBreaker(settings);
    for (let i = 0; i < 3; i++) breaker.record(0, false, 'send');
    expect(breaker.admit(5_000)).toBe('trial');
    expect(breaker.record(5_000, false, 'trial')).toBe('reopened');
    expect(breaker.cooldownMs).toBe(10_000);
    expect(breaker.admit(14_999)).toBeUndefined();
    expect(breaker.admit(15_000)).toBe('trial');
    expect(breaker.record(15_000, false, 'trial')).toBe('reopened');
    expect(breaker.cooldownMs).toBe(12_000);
    expect(breaker.admit(26_999)).toBeUndefined();
    expect(breaker.admit(27_000)).toBe('trial');
  });

  it('a passing health check closes it past the cooldown while no call has been tried since it opened', () => {
    const breaker = new UpstreamBreaker(settings);
    for (let i = 0; i < 3; i++) breaker.record(0, false, 'send');
    // Within the cooldown a check proves nothing yet.
    expect(breaker.checkPassed(4_999)).toBeUndefined();
    expect(breaker.stateAt(4_999)).toBe('open');
    // QA: an idle replica, no call ever comes; the check closes it.
    expect(breaker.checkPassed(5_000)).toBe('closed');
    expect(breaker.stateAt(5_000)).toBe('closed');
    expect(breaker.checkPassed(5_001)).toBeUndefined();
    // Closed afresh: the first cooldown again.
    for (let i = 0; i < 3; i++) breaker.record(6_000, false, 'send');
    expect(breaker.cooldownMs).toBe(5_000);
  });

  it('once a trial was tried, only a trial closes it (a node answering checks but failing calls)', () => {
    const breaker = new UpstreamBreaker(settings);
    for (let i = 0; i < 3; i++) breaker.record(0, false, 'send');
    expect(breaker.admit(5_000)).toBe('trial');
    // The trial in flight: a check does not take its place.
    expect(breaker.checkPassed(5_001)).toBeUndefined();
    expect(breaker.record(5_002, false, 'trial')).toBe('reopened');
    expect(breaker.checkPassed(15_002)).toBeUndefined();
    expect(breaker.stateAt(15_002)).toBe('half_open');
    expect(breaker.admit(15_002)).toBe('trial');
    expect(breaker.record(15_003, true, 'trial')).toBe('closed');
    // A new opening starts without a tried call: checks may close it again.
    for (let i = 0; i < 3; i++) breaker.record(16_000, false, 'send');
    expect(breaker.checkPassed(21_000)).toBe('closed');
  });
});
