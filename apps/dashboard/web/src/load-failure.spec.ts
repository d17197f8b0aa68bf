import { operatorAccountFailure, retryableLoad } from './load-failure';

describe('a failed load offers Try again only when asking again may help', () => {
  it('a 5xx, no answer or a thrown error may pass; a 4xx says the same again', () => {
    expect(retryableLoad({ status: 503 })).toBe(true);
    expect(retryableLoad({ status: 500 })).toBe(true);
    expect(retryableLoad({ status: 0 })).toBe(true);
    expect(retryableLoad(new Error('boom'))).toBe(true);
    expect(retryableLoad({ status: 404 })).toBe(false);
    expect(retryableLoad({ status: 400 })).toBe(false);
    expect(retryableLoad({ status: 403 })).toBe(false);
  });

  it("the operator's page of an unknown account says which, with no Try again", () => {
    expect(operatorAccountFailure({ status: 404 }, 'acc_nope')).toEqual({
      kind: 'missing',
      title: 'No account acc_nope',
    });
    expect(operatorAccountFailure({ status: 503 }, 'acc_1')).toEqual({
      kind: 'failed',
      retry: true,
    });
    expect(operatorAccountFailure({ status: 0 }, 'acc_1')).toEqual({
      kind: 'failed',
      retry: true,
    });
    expect(operatorAccountFailure({ status: 400 }, 'acc_1')).toEqual({
      kind: 'failed',
      retry: false,
    });
  });
});
