import { eventBudget, replayRows } from './failed-deliveries';

const row = (event_id: string, final: boolean, test = false, outcome = 'failure') => ({
  event_id,
  final,
  test,
  outcome,
});

describe('replayRows', () => {
  it('one button per given-up or dropped event, on its newest row; none for tests or retries', () => {
    const rows = [
      row('ev_a', false), // a retry of ev_a after its first phase gave up
      row('ev_b', true, false, 'dropped'),
      row('ev_a', true),
      row('ev_a', false),
      row('ev_c', false), // still being retried: nothing to replay yet
      row('ev_t', true, true), // a test delivery is never replayed
    ];
    expect([...replayRows(rows)]).toEqual([0, 1]);
  });

  it('none for an empty log', () => {
    expect(replayRows([]).size).toBe(0);
  });
});

describe('eventBudget', () => {
  const attempt = (
    event_attempt: number | null,
    event_attempts_left: number | null,
    test = false,
  ) => ({
    test,
    event_attempt,
    event_attempts_left,
  });

  it("reads an attempt against its event's 8, whichever phase made it", () => {
    expect(eventBudget(attempt(1, 7))).toBe('event 1 of 8, 7 left');
    expect(eventBudget(attempt(5, 3))).toBe('event 5 of 8, 3 left');
    expect(eventBudget(attempt(8, 0))).toBe('event 8 of 8, 0 left');
  });

  it('nothing for a test delivery, a drop or an attempt without a slot', () => {
    expect(eventBudget(attempt(1, 0, true))).toBeNull();
    expect(eventBudget(attempt(null, 0))).toBeNull();
    expect(eventBudget(attempt(null, null))).toBeNull();
  });
});

describe('replayRows and rate-limited drops (ADR 0433)', () => {
  it('an event dropped by the events budget has Replay on its newest row', () => {
    const rows = [
      row('ev_r', true, false, 'rate_limited'), // confirmed phase
      row('ev_r', true, false, 'rate_limited'), // unconfirmed phase
    ];
    expect([...replayRows(rows)]).toEqual([0]);
  });
});
