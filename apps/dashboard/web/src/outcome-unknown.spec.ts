import {
  isOutcomeUnknown,
  OUTCOME_CHECKS_MS,
  OutcomeChecks,
  outcomeSeen,
  type Timers,
} from './outcome-unknown';

describe('a write whose outcome is unknown (QA M5)', () => {
  it("is the BFF's timeout of a write, or no answer from the BFF to a write", () => {
    const unknown = { outcome: 'unknown' };
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      expect(isOutcomeUnknown(method, 503, 'upstream_unavailable', unknown)).toBe(true);
      expect(isOutcomeUnknown(method, 0, 'timeout', {})).toBe(true);
    }
    // A read changed nothing; an API not reached and a refusal are known outcomes.
    expect(isOutcomeUnknown('GET', 503, 'upstream_unavailable', unknown)).toBe(false);
    expect(isOutcomeUnknown('GET', 0, 'timeout', {})).toBe(false);
    expect(isOutcomeUnknown('PUT', 503, 'upstream_unavailable', {})).toBe(false);
    expect(isOutcomeUnknown('PUT', 0, 'network_error', {})).toBe(false);
    expect(isOutcomeUnknown('PUT', 409, 'conflict', unknown)).toBe(false);
  });

  it('asks again on a bounded schedule, soon first, starting over on a second failure', () => {
    let now = 0;
    const due: Array<{ at: number; run: () => void; live: boolean }> = [];
    const timers: Timers = {
      setTimeout: (run, ms) => {
        const timer = { at: now + ms, run, live: true };
        due.push(timer);
        return timer;
      },
      clearTimeout: (timer) => void ((timer as { live: boolean }).live = false),
    };
    const advance = (ms: number) => {
      now += ms;
      for (const timer of due.filter((t) => t.live && t.at <= now)) {
        timer.live = false;
        timer.run();
      }
    };
    let asked = 0;
    const checks = new OutcomeChecks(() => (asked += 1), timers);
    checks.start();
    advance(1_000);
    expect(asked).toBe(1); // the API thawed a second later: seen at once
    advance(2_000);
    expect(asked).toBe(2);
    checks.start(); // another write timed out: one schedule, from now
    advance(120_000);
    expect(asked).toBe(2 + OUTCOME_CHECKS_MS.length);
    advance(10 * 60_000);
    expect(asked).toBe(2 + OUTCOME_CHECKS_MS.length); // bounded: two minutes
    expect(Math.max(...OUTCOME_CHECKS_MS)).toBe(120_000);
  });

  it('is applied once the page reads what it asked for', () => {
    expect(outcomeSeen('scale', 'scale')).toBe('applied');
    expect(outcomeSeen<string | null>('scale', 'growth')).toBe('unknown');
  });
});
