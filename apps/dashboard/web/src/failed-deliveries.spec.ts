import { replayRows } from './failed-deliveries';

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
