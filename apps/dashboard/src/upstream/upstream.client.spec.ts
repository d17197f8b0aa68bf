import { upstreamUnavailable } from './upstream.client';

describe('upstreamUnavailable: the one wording of an API that did not answer', () => {
  it('says a write that timed out may still be applied, for the page to ask again (QA M5)', () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const error = upstreamUnavailable('billing', method, true, 15_000);
      expect([error.code, error.kind, error.retryable]).toEqual([
        'upstream_unavailable',
        'unavailable',
        false,
      ]);
      expect(error.message).toBe(
        'billing did not answer in time; the change may still be applied — this page will show ' +
          'the outcome',
      );
      expect(error.details).toEqual({ outcome: 'unknown' });
    }
  });

  it('names the wait of a read, and an API not reached changed nothing', () => {
    const read = upstreamUnavailable('webhooks', 'GET', true, 15_000);
    expect(read.message).toBe('webhooks did not answer within 15 s');
    expect(read.details).toBeUndefined();
    const unreached = upstreamUnavailable('audit', 'POST', false, 15_000);
    expect(unreached.message).toBe('audit is not reachable');
    expect(unreached.details).toBeUndefined();
  });
});
