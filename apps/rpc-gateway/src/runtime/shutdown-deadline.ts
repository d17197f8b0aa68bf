/**
 * The bound on a graceful stop: HTTP connections still open after the drain (10 s) are cut and
 * WebSocket ones after a second (ADR 0203 amendment); the last usage flush and the closes that
 * follow get the rest. A process still running then exits with 1, so a supervisor that waits
 * for it (Kubernetes' grace period, the stack's restart) never waits on a stop held by load:
 * QA saw a flooded gateway stay busy about 90 s after SIGTERM.
 */
export const SHUTDOWN_DEADLINE_MS = 15_000;

export interface ShutdownDeadlineHost {
  once(signal: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
  exit(code: number): void;
}

/**
 * Arms, on the first SIGTERM or SIGINT, a timer that ends the process `deadlineMs` later. The
 * listeners are `once`: Nest's shutdown hook sends the signal to the process again when it is
 * done, and a listener still registered then would keep the process alive. The timer is unref'd:
 * it never keeps a process that has finished alive.
 */
export function armShutdownDeadline(
  host: ShutdownDeadlineHost,
  onOverrun: () => void,
  deadlineMs = SHUTDOWN_DEADLINE_MS,
  setTimer: (fn: () => void, ms: number) => { unref(): unknown } = setTimeout,
): void {
  let armed = false;
  const arm = () => {
    if (armed) return;
    armed = true;
    setTimer(() => {
      onOverrun();
      host.exit(1);
    }, deadlineMs).unref();
  };
  host.once('SIGTERM', arm);
  host.once('SIGINT', arm);
}
