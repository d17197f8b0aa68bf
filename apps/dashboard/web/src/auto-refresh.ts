/**
 * When a page asks the server again on its own (`useAutoRefresh`, use-auto-refresh.tsx): the
 * schedule (`AutoRefresher`) and the pages' policies. Pure: the clock, the timers, the page's
 * visibility and focus are given, so the rules are tested with fake timers.
 *
 * - A page refreshes when its policy says (`nextDelay`), only while the tab is visible (Page
 *   Visibility API): a hidden tab sends nothing, however many are open. Coming back visible, or
 *   the window taking focus, refreshes at once (at most once per `minGapMs`) and schedules again.
 * - One refresh at a time; the next is scheduled when it has answered, so a slow API is never
 *   asked twice at once.
 * - Delays carry ±10 % jitter, so tabs opened together do not ask together.
 */

export interface RefreshEnvironment {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  visible(): boolean;
  /** Calls `changed` when the page is shown or hidden, or the window takes focus; undoes it. */
  listen(changed: (event: 'visible' | 'hidden' | 'focus') => void): () => void;
  /** In [0, 1). */
  random(): number;
}

/** Milliseconds until the next refresh; null: none scheduled (focus still refreshes). */
export type NextDelay = (now: number) => number | null;

export class AutoRefresher {
  private timer: unknown = undefined;
  private inFlight = false;
  private lastRefresh = -Infinity;
  private stopListening: (() => void) | undefined;

  constructor(
    private readonly env: RefreshEnvironment,
    private readonly refresh: () => Promise<unknown>,
    private readonly nextDelay: NextDelay,
    private readonly minGapMs = 2_000,
  ) {}

  start(): void {
    this.stopListening = this.env.listen((event) => {
      if (event === 'hidden') return this.cancel();
      this.refreshNow();
    });
    this.schedule();
  }

  stop(): void {
    this.stopListening?.();
    this.stopListening = undefined;
    this.cancel();
  }

  /** The policy's inputs changed (the page's data did): the schedule is made again. */
  reschedule(): void {
    if (!this.inFlight) this.schedule();
  }

  private cancel(): void {
    if (this.timer !== undefined) this.env.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.cancel();
    if (!this.stopListening || !this.env.visible()) return;
    const delay = this.nextDelay(this.env.now());
    if (delay === null) return;
    const jittered = Math.max(0, Math.round(delay * (0.9 + 0.2 * this.env.random())));
    this.timer = this.env.setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, jittered);
  }

  private refreshNow(): void {
    if (this.env.now() - this.lastRefresh < this.minGapMs) return this.schedule();
    void this.run();
  }

  private async run(): Promise<void> {
    if (this.inFlight || !this.stopListening) return;
    this.cancel();
    this.inFlight = true;
    this.lastRefresh = this.env.now();
    try {
      await this.refresh();
    } catch {
      // The query shows its own error; the schedule goes on (with its backoff).
    } finally {
      this.inFlight = false;
    }
    this.schedule();
  }
}

/**
 * Pending top-ups: ask again just after the first clears (billing's ledger tick clears them each
 * second), then back off while one is still pending past its time: each wait as long as it has
 * been overdue (2 s at least, 30 s at most: 2, 4, 8, 16, 30, 30 … s). Never waits longer
 * than 30 s, whatever the page's clock says against the server's.
 */
export function pendingTopUpDelay(clearsAt: readonly string[]): NextDelay | null {
  if (clearsAt.length === 0) return null;
  const first = Math.min(...clearsAt.map((iso) => new Date(iso).getTime()));
  return (now) => {
    const due = first - now;
    if (due > 0) return Math.min(Math.max(due + 1_500, 2_000), 30_000);
    return Math.min(Math.max(-due, 2_000), 30_000);
  };
}

/**
 * A load that failed (the page's "Could not load this") is asked again on its own, so a page
 * recovers when its API answers again (QA: it stayed failed until Try again): after 10 s, 20 s,
 * 40 s, then every 60 s, and when the tab is shown again or the window takes focus, at most
 * once per `FAILED_LOAD_MIN_GAP_MS`. From the second wait on each is longer than the BFF's
 * 15 s timeout, and a focus comes no sooner than the page's own limit (CLIENT_TIMEOUT_MS, waits.ts)
 * after the last ask, so a frozen API is never asked again while a retry of it still waits.
 * Each call is the next wait: one policy per failed load.
 */
export function failedLoadBackoff(): NextDelay {
  let attempt = 0;
  return () => Math.min(10_000 * 2 ** attempt++, 60_000);
}

export const FAILED_LOAD_MIN_GAP_MS = 20_000;

/** A webhook's page: its stats and failed deliveries asked again this often while open. */
export const WEBHOOK_VIEW_REFRESH_MS = 15_000;

/** A view read while it is open (a webhook's stats and deliveries): every `everyMs`. */
export const every =
  (everyMs: number): NextDelay =>
  () =>
    everyMs;
