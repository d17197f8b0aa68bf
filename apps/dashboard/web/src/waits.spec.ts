import {
  CLIENT_TIMEOUT_MS,
  RequestsInFlight,
  retryRead,
  SLOW_FAILURE_MS,
  slowWaits,
  waitedFor,
} from './waits';

describe('how long the page waits (a slow API)', () => {
  it('a read is asked once more only after a fast failure of the server side', () => {
    const fail = (status: number, elapsedMs: number, code = 'upstream_unavailable') => ({
      status,
      code,
      elapsedMs,
    });
    expect(retryRead(0, fail(503, 40))).toBe(true); // an API restarting: refused at once
    expect(retryRead(0, fail(0, 10, 'network_error'))).toBe(true);
    expect(retryRead(1, fail(503, 40))).toBe(false); // once only
    // The BFF's 15 s timeout (billing frozen): said at once, not after 3 × 15 s.
    expect(retryRead(0, fail(503, 15_004))).toBe(false);
    expect(retryRead(0, fail(503, SLOW_FAILURE_MS))).toBe(false);
    expect(retryRead(0, fail(0, CLIENT_TIMEOUT_MS, 'timeout'))).toBe(false);
    expect(retryRead(0, fail(404, 5, 'not_found'))).toBe(false);
    expect(retryRead(0, undefined)).toBe(false);
  });

  it('the longest a read can wait is bounded (about 26 s), a frozen API reported after 15 s', () => {
    // A fast failure just under the limit, 1 s of retry delay, then the page's own limit.
    expect(SLOW_FAILURE_MS + 1_000 + CLIENT_TIMEOUT_MS).toBeLessThanOrEqual(26_000);
    expect(CLIENT_TIMEOUT_MS).toBeGreaterThan(15_000); // the BFF's 503 arrives before it
  });

  it('names what a request waits for', () => {
    expect(waitedFor('/api/relay/billing/account')).toBe('billing (balance, usage, top-ups)');
    expect(waitedFor('/api/relay/webhooks/webhooks/w1/stats')).toBe('the webhook service');
    expect(waitedFor('/api/relay/audit/wallet-audit/quota')).toBe('the address audit service');
    expect(waitedFor('/api/operator/accounts/a1')).toBe('billing and the webhook service');
    expect(waitedFor('/api/networks')).toBe('the dashboard server');
  });

  it('lists what has been waited for over 3 s, longest first, each once', () => {
    const requests = new RequestsInFlight();
    let changes = 0;
    requests.subscribe(() => changes++);
    const t0 = 1_000_000;
    const account = requests.begin('billing', t0);
    requests.begin('billing', t0 + 1_000);
    const hooks = requests.begin('webhooks', t0 + 500);
    expect(requests.slow(t0 + 2_999)).toEqual([]);
    expect(requests.slow(t0 + 4_000)).toEqual([
      { what: 'billing', ms: 4_000 },
      { what: 'webhooks', ms: 3_500 },
    ]);
    account();
    hooks();
    expect(requests.slow(t0 + 4_000)).toEqual([{ what: 'billing', ms: 3_000 }]);
    expect(changes).toBe(5);
  });

  it("names the API from the loading state's first slow tick, though its request is a few ms younger (QA)", () => {
    const requests = new RequestsInFlight();
    const mounted = 1_000_000;
    // Loading mounts, the page's requests start 8 ms and 20 ms later (billing frozen).
    requests.begin('billing', mounted + 8);
    requests.begin('the webhook service', mounted + 20);
    expect(slowWaits(requests, 2_000, mounted + 2_000)).toBeNull();
    // The first slow tick: no request is 3 s old, the slowest is named all the same.
    expect(slowWaits(requests, 3_000, mounted + 3_000)).toEqual([{ what: 'billing', ms: 2_992 }]);
    // From then on, what has been waited for 3 s.
    expect(slowWaits(requests, 4_000, mounted + 4_000)).toEqual([
      { what: 'billing', ms: 3_992 },
      { what: 'the webhook service', ms: 3_980 },
    ]);
    // Nothing in flight: the loading state says "the server".
    expect(slowWaits(new RequestsInFlight(), 3_000, mounted + 3_000)).toEqual([]);
  });
});
