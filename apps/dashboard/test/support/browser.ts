import type { NestFastifyApplication } from '@nestjs/platform-fastify';

export interface BrowserAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * A browser in miniature: keeps the session cookie and the CSRF token between calls, from its
 * own address. `via` sends a call to another dashboard replica (one database, one session).
 */
export class Browser {
  private cookie = '';
  private csrf = '';

  constructor(
    private readonly app: NestFastifyApplication,
    private readonly remoteAddress = '127.0.0.1',
  ) {}

  async call(
    method: string,
    url: string,
    body?: unknown,
    via: NestFastifyApplication = this.app,
  ): Promise<BrowserAnswer> {
    const response = await via.inject({
      method: method as 'GET',
      url,
      remoteAddress: this.remoteAddress,
      headers: {
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(this.csrf ? { 'x-csrf-token': this.csrf } : {}),
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookie = response.headers['set-cookie'];
    const first = Array.isArray(setCookie) ? setCookie[0] : setCookie;
    if (first) this.cookie = first.split(';')[0]!;
    const parsed = response.body ? (response.json() as Record<string, unknown>) : {};
    if (typeof parsed['csrf_token'] === 'string') this.csrf = parsed['csrf_token'];
    return { status: response.statusCode, body: parsed };
  }
}
