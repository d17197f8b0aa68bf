import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import { ChainUrlCheck, chainUrlsAnswering404 } from './chain-url-check';

/** A gateway as seen without a token: 404 at `/`, JSON-RPC at `/tok/`. */
describe('chainUrlsAnswering404', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      if (req.url === '/tok/') {
        res.setHeader('content-type', 'application/json');
        res.end('{"jsonrpc":"2.0","id":1,"result":"0x1"}');
      } else {
        res.statusCode = 404;
        res.end('not found');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('names a token-less AUDIT_RPC_URL by its origin only', async () => {
    expect(await chainUrlsAnswering404({}, `${base}`, 2_000)).toEqual([
      { chains: ['ETH'], origin: base, status: 404 },
    ]);
  });

  it('is quiet for a URL with a token, one the map overrides, and one that does not answer', async () => {
    expect(await chainUrlsAnswering404({ POLY: `${base}/tok/` }, `${base}/tok/`, 2_000)).toEqual(
      [],
    );
    expect(await chainUrlsAnswering404({ ETH: `${base}/tok/` }, base, 2_000)).toEqual([]);
    expect(await chainUrlsAnswering404({}, 'http://127.0.0.1:1/x/', 500)).toEqual([]);
  });

  it('groups the chains of one URL', async () => {
    expect(
      await chainUrlsAnswering404({ BASE: `${base}/`, OPBNB: `${base}/` }, undefined, 2_000),
    ).toEqual([{ chains: ['BASE', 'OPBNB'], origin: base, status: 404 }]);
  });

  it('logs one warning per such URL at start, naming the chains and the origin', async () => {
    const warned: { fields: object; message: string }[] = [];
    const logger = { warn: (fields: object, message: string) => warned.push({ fields, message }) };
    const config = {
      AUDIT_RPC_URLS: { POLY: `${base}/tok/` },
      AUDIT_RPC_URL: `${base}/`,
      AUDIT_RPC_TIMEOUT_MS: 2_000,
    } as unknown as AppConfig;
    await new ChainUrlCheck(config, logger as unknown as Logger).check();
    expect(warned).toEqual([
      {
        fields: { chains: ['ETH'], url: base, status: 404 },
        message: expect.stringContaining('without an access token'),
      },
    ]);
  });
});
