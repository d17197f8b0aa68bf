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
