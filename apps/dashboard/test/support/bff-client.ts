import type { NestFastifyApplication } from '@nestjs/platform-fastify';

export interface BffAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, unknown>;
}

export interface BffCallOptions {
  /** false: the call goes without the CSRF token (a forged request). */
  csrf?: boolean;
  headers?: Record<string, string>;
  /** Another dashboard replica to send the call to (one database, one session). */
  via?: NestFastifyApplication;
}

/**
 * A browser in miniature for the dashboard's BFF: keeps the session cookie and the CSRF token
 * between calls, from its own address (sign-in and sign-up are throttled per address). `app`
 * may be a getter, for a test that restarts the dashboard under the same browser.
 */
export class BffClient {
  cookie = '';
  csrf = '';

  constructor(
    private readonly app: NestFastifyApplication | (() => NestFastifyApplication),
    private readonly remoteAddress = '127.0.0.1',
  ) {}

  async call(
    method: string,
    url: string,
    body?: unknown,
    options: BffCallOptions = {},
  ): Promise<BffAnswer> {
    const app = options.via ?? (typeof this.app === 'function' ? this.app() : this.app);
    const response = await app.inject({
      method: method as 'GET',
      url,
      remoteAddress: this.remoteAddress,
      headers: {
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(options.csrf === false || !this.csrf ? {} : { 'x-csrf-token': this.csrf }),
        ...options.headers,
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookie = response.headers['set-cookie'];
    const first = Array.isArray(setCookie) ? setCookie[0] : setCookie;
    if (first) this.cookie = first.split(';')[0]!;
    const parsed = response.body ? (response.json() as Record<string, unknown>) : {};
    if (typeof parsed['csrf_token'] === 'string') this.csrf = parsed['csrf_token'];
    return { status: response.statusCode, body: parsed, headers: response.headers };
  }
}
