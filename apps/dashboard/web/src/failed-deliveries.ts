/**
 * Which rows of the failed-attempt log (newest first) carry a Replay button: the API replays an
 * event that was given up or dropped (a final attempt that failed, not a test delivery), every
 * such phase of it at once, so one button per event, on its newest row.
 */
export function replayRows(
  rows: ReadonlyArray<{ event_id: string; final: boolean; test: boolean; outcome: string }>,
): Set<number> {
  const replayable = new Set(
    rows.filter((r) => r.final && !r.test && r.outcome !== 'success').map((r) => r.event_id),
  );
  const out = new Set<number>();
  const done = new Set<string>();
  rows.forEach((r, i) => {
    if (!replayable.has(r.event_id) || done.has(r.event_id)) return;
    done.add(r.event_id);
    out.add(i);
  });
  return out;
}

/**
 * Where an attempt stands in its event's budget (webhook-matcher's `event_attempt` and
 * `event_attempts_left`: an event is attempted at most 8 times across its deliveries, so the
 * confirmed phase's attempt 1 may be the event's 5th): "event 5 of 8, 3 left". None for a test
 * delivery (one attempt), a drop, or an attempt recorded before the slot was kept.
 */
export function eventBudget(row: {
  test: boolean;
  event_attempt: number | null;
  event_attempts_left: number | null;
}): string | null {
  if (row.test || row.event_attempt === null || row.event_attempts_left === null) return null;
  const total = row.event_attempt + row.event_attempts_left;
  return `event ${row.event_attempt} of ${total}, ${row.event_attempts_left} left`;
}
