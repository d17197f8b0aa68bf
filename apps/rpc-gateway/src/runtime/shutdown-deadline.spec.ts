import { armShutdownDeadline } from './shutdown-deadline';

describe('armShutdownDeadline: a stop held by load still ends the process', () => {
  function host() {
    const listeners = new Map<string, () => void>();
    const exits: number[] = [];
    const timers: { ms: number; fn: () => void; unrefed: boolean }[] = [];
    const setTimer = (fn: () => void, ms: number) => {
      const timer = { ms, fn, unrefed: false };
      timers.push(timer);
      return { unref: () => (timer.unrefed = true) };
    };
    return {
      listeners,
      exits,
      timers,
      setTimer,
      process: {
        once: (signal: 'SIGTERM' | 'SIGINT', listener: () => void) =>
          listeners.set(signal, listener),
        exit: (code: number) => void exits.push(code),
      },
    };
  }

  it('arms one unref’d timer on the first signal; when it fires the process exits 1', () => {
    const h = host();
    const overruns: number[] = [];
    armShutdownDeadline(h.process, () => overruns.push(1), 15_000, h.setTimer);
    expect(h.timers).toHaveLength(0);
    h.listeners.get('SIGTERM')!();
    h.listeners.get('SIGINT')!();
    expect(h.timers.map((t) => [t.ms, t.unrefed])).toEqual([[15_000, true]]);
    expect(h.exits).toEqual([]);
    h.timers[0]!.fn();
    expect(overruns).toEqual([1]);
    expect(h.exits).toEqual([1]);
  });
});
