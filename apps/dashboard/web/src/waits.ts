/**
 * How long the page waits for an answer, and what it says meanwhile (api.tsx, Loading).
 *
 * The BFF gives each call to an API `UPSTREAM_TIMEOUT_MS` (15 s) and then answers 503
 * `upstream_unavailable`. The page's own limit is a little longer (`CLIENT_TIMEOUT_MS`, the BFF
 * itself not answering); a read (GET) that failed fast (a network blip, an API restarting) is
 * asked once more, one that failed slowly (the BFF's timeout: the API is hung) is not: waiting
 * 15 s again would only say the same later. So a frozen API is reported after about 15 s, and
 * no read waits more than `SLOW_FAILURE_MS` + 1 s + `CLIENT_TIMEOUT_MS` (26 s) in all. A POST
 * is never repeated by the page (a top-up, a credit: the form's Idempotency-Key makes the
 * user's own retry safe). After `SLOW_AFTER_MS` a loading state says it is still waiting, and
 * for what.
 */

export const CLIENT_TIMEOUT_MS = 20_000;
export const SLOW_FAILURE_MS = 5_000;
export const SLOW_AFTER_MS = 3_000;

/** What a call of the page waits for, said to the user. */
export function waitedFor(path: string): string {
  if (path.startsWith('/api/relay/billing')) return 'billing (balance, usage, top-ups)';
  if (path.startsWith('/api/relay/webhooks')) return 'the webhook service';
  if (path.startsWith('/api/relay/audit')) return 'the address audit service';
  if (path.startsWith('/api/operator')) return 'billing and the webhook service';
  return 'the dashboard server';
}

/** A failure as the retry rule sees it: its HTTP status (0: no answer) and how long it took. */
export interface Failure {
  status: number;
  code: string;
  elapsedMs: number;
}

/** TanStack Query's `retry` for reads: once, and only after a fast failure of the server side. */
export function retryRead(failureCount: number, failure: Failure | undefined): boolean {
  if (failureCount >= 1 || failure === undefined) return false;
  if (failure.status >= 400 && failure.status < 500) return false; // asking again changes nothing
  if (failure.code === 'timeout') return false;
  return failure.elapsedMs < SLOW_FAILURE_MS;
}

/**
 * What a loading state names once it has itself waited `SLOW_AFTER_MS` (null before): what has
 * been waited for that long, or else the slowest request in flight whatever its age. The page's
 * requests start a few ms after its loading state does, so at its first slow tick none is 3 s
 * old yet (QA: "still waiting for the server" for a second, then the API's name). Empty: nothing
 * in flight (the server, unnamed).
 */
export function slowWaits(
  requests: RequestsInFlight,
  pageWaitedMs: number,
  now: number,
): Array<{ what: string; ms: number }> | null {
  if (pageWaitedMs < SLOW_AFTER_MS) return null;
  const slow = requests.slow(now);
  return slow.length > 0 ? slow : requests.slow(now, 0).slice(0, 1);
}

/** The page's requests in flight: what each waits for and since when (Loading reads them). */
export class RequestsInFlight {
  private next = 0;
  private readonly requests = new Map<number, { what: string; since: number }>();
  private readonly listeners = new Set<() => void>();
  private version = 0;

  begin(what: string, now: number): () => void {
    const id = ++this.next;
    this.requests.set(id, { what, since: now });
    this.changed();
    return () => {
      this.requests.delete(id);
      this.changed();
    };
  }

  /** What has been waited for at least `atLeastMs`, longest first, each named once. */
  slow(now: number, atLeastMs = SLOW_AFTER_MS): Array<{ what: string; ms: number }> {
    const longest = new Map<string, number>();
    for (const { what, since } of this.requests.values()) {
      const ms = now - since;
      if (ms >= atLeastMs && ms > (longest.get(what) ?? -1)) longest.set(what, ms);
    }
    return [...longest].map(([what, ms]) => ({ what, ms })).sort((a, b) => b.ms - a.ms);
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  snapshot = (): number => this.version;

  private changed(): void {
    this.version += 1;
    for (const listener of this.listeners) listener();
  }
}
