import { loggableError, redactUrls, urlOrigin } from './log-safe';

const TOKEN = 'QAEFAKEACCESSTOKEN0123456789abcdef0123';

describe('log-safe: a configured URL appears in logs as its origin only', () => {
  it.each([
    [`https://eth.example.com/v2/${TOKEN}`, 'https://eth.example.com'],
    [`http://127.0.0.1:8545/?apikey=${TOKEN}`, 'http://127.0.0.1:8545'],
    [`wss://user:${TOKEN}@node.example.com:8546/ws`, 'wss://node.example.com:8546'],
    [`nats://${TOKEN}@nats.internal:4222`, 'nats://nats.internal:4222'],
    ['not a url', '(unparseable URL)'],
  ])('urlOrigin(%s) = %s', (url, origin) => {
    expect(urlOrigin(url)).toBe(origin);
  });

  it('reduces every URL in a text to its origin and keeps the rest', () => {
    const text = `HTTP request failed.\n\nURL: http://127.0.0.1:1/${TOKEN}/\nRequest body: {"a":1}`;
    expect(redactUrls(text)).toBe(
      'HTTP request failed.\n\nURL: http://127.0.0.1:1\nRequest body: {"a":1}',
    );
    expect(redactUrls(`(https://a.example/${TOKEN}), wss://b.example/x?k=${TOKEN}.`)).toBe(
      '(https://a.example), wss://b.example',
    );
  });

  it('cleans an error and its cause chain: no stack, no URL path, query or userinfo', () => {
    const root = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
      code: 'ECONNREFUSED',
    });
    const fetchFailed = new TypeError('fetch failed', { cause: root });
    class HttpRequestError extends Error {
      override name = 'HttpRequestError';
      readonly url = `http://127.0.0.1:1/${TOKEN}/`;
      readonly status = 503;
      readonly details = `fetch failed at http://127.0.0.1:1/${TOKEN}/`;
      constructor() {
        super(`HTTP request failed.\n\nURL: http://127.0.0.1:1/${TOKEN}/`, { cause: fetchFailed });
      }
    }
    const cleaned = loggableError(new HttpRequestError());
    expect(cleaned).toEqual({
      type: 'HttpRequestError',
      message: 'HTTP request failed.\n\nURL: http://127.0.0.1:1',
      status: 503,
      details: 'fetch failed at http://127.0.0.1:1',
      cause: {
        type: 'TypeError',
        message: 'fetch failed',
        cause: { type: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:1', code: 'ECONNREFUSED' },
      },
    });
    expect(JSON.stringify(cleaned)).not.toContain(TOKEN);
  });

  it('stops on a cause cycle and takes non-errors', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(JSON.stringify(loggableError(a)).length).toBeLessThan(1_000);
    expect(loggableError(`boom at https://x.example/${TOKEN}`)).toEqual({
      type: 'string',
      message: 'boom at https://x.example',
    });
  });
});
