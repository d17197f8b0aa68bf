import { useEffect, useRef } from 'react';
import { AutoRefresher, type NextDelay, type RefreshEnvironment } from './auto-refresh';

/**
 * A page's data asked again on its own (the one way pages do it; rules in auto-refresh.ts):
 * `refresh` (invalidating the page's queries) when `nextDelay` says, while the tab is visible,
 * and at once when the tab is shown again or the window takes focus. `nextDelay` null: only
 * focus and visibility refresh. `policyKey` names the policy's inputs (the pending top-ups'
 * clear times, say): when it changes the schedule is made again.
 */
export function useAutoRefresh(options: {
  refresh: () => Promise<unknown>;
  nextDelay: NextDelay | null;
  policyKey: string;
  /** A focus or a shown tab refreshes at most this often (AutoRefresher's default: 2 s). */
  minGapMs?: number;
}): void {
  const refresher = useRef<AutoRefresher | null>(null);
  const latest = useRef(options);
  latest.current = options;
  useEffect(() => {
    // Made once per mounted page; its refresh and policy are this render's, read through `latest`.
    const r = new AutoRefresher(
      browserEnvironment(),
      () => latest.current.refresh(),
      (now) => latest.current.nextDelay?.(now) ?? null,
      latest.current.minGapMs,
    );
    refresher.current = r;
    r.start();
    return () => {
      r.stop();
      refresher.current = null;
    };
  }, []);
  const key = options.policyKey;
  const seen = useRef(key);
  useEffect(() => {
    if (seen.current === key) return;
    seen.current = key;
    refresher.current?.reschedule();
  }, [key]);
}

/** The browser's: window timers, `document.visibilityState`, `visibilitychange` and `focus`. */
function browserEnvironment(): RefreshEnvironment {
  return {
    now: () => Date.now(),
    setTimeout: (run, ms) => window.setTimeout(run, ms),
    clearTimeout: (handle) => window.clearTimeout(handle as number),
    visible: () => document.visibilityState !== 'hidden',
    listen: (changed) => {
      const onVisibility = () =>
        changed(document.visibilityState === 'hidden' ? 'hidden' : 'visible');
      const onFocus = () => changed('focus');
      document.addEventListener('visibilitychange', onVisibility);
      window.addEventListener('focus', onFocus);
      return () => {
        document.removeEventListener('visibilitychange', onVisibility);
        window.removeEventListener('focus', onFocus);
      };
    },
    random: Math.random,
  };
}
