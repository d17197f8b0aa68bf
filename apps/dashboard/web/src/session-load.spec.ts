import { SESSION_RETRY_MAX_MS, sessionLoadView, sessionRetryDelay } from './session-load';

describe('sessionLoadView: the session load before any page (QA: "Loading…" for minutes)', () => {
  it('shows the fallback while nothing has failed', () => {
    expect(sessionLoadView(null, 0)).toEqual({ kind: 'loading' });
  });

  it('says a 503 database_unavailable is brief and asks again on its own', () => {
    const view = sessionLoadView({ status: 503, code: 'database_unavailable' }, 2);
    expect(view).toEqual({
      kind: 'brief_outage',
      message: expect.stringMatching(/briefly unavailable/),
      retryInMs: 2_000,
    });
  });

  it('says any other failure, not retried on the brief schedule', () => {
    expect(sessionLoadView({ status: 500, code: 'internal' }, 1)).toEqual({ kind: 'failed' });
    expect(sessionLoadView({ status: 503, code: 'upstream_unavailable' }, 1)).toEqual({
      kind: 'failed',
    });
    expect(sessionLoadView({ status: 0, code: 'network' }, 1)).toEqual({ kind: 'failed' });
  });
});

describe('sessionRetryDelay', () => {
  it('waits 1, 2, 4, 8 s, then every 15 s', () => {
    expect([1, 2, 3, 4, 5, 6, 20].map(sessionRetryDelay)).toEqual([
      1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000,
    ]);
    expect(SESSION_RETRY_MAX_MS).toBe(15_000);
  });
});
