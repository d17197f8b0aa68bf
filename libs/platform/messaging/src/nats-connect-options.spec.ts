import { urlOrigin } from '@meridian/platform-observability';
import { natsConnectOptions } from './nats-connect-options';

describe('natsConnectOptions', () => {
  it('passes a URL user and password as options (nats.js drops them from a server URL)', () => {
    expect(natsConnectOptions({ url: 'nats://ledger:s3cret%2Fpw@nats:4222' })).toEqual({
      servers: 'nats://nats:4222',
      user: 'ledger',
      pass: 's3cret/pw',
    });
  });

  it('takes a user alone as a token', () => {
    expect(natsConnectOptions({ url: 'nats://t0ken@nats:4222' })).toEqual({
      servers: 'nats://nats:4222',
      token: 't0ken',
    });
  });

  it('requires TLS for tls:// or any TLS file, and leaves it to the server otherwise', () => {
    expect(natsConnectOptions({ url: 'tls://nats:4222' })).toEqual({
      servers: 'tls://nats:4222',
      tls: {},
    });
    expect(natsConnectOptions({ url: 'nats://nats', tls: { caFile: '/ca.crt' } })).toEqual({
      servers: 'nats://nats',
      tls: { caFile: '/ca.crt' },
    });
    expect(natsConnectOptions({ url: 'nats://127.0.0.1:4222' })).toEqual({
      servers: 'nats://127.0.0.1:4222',
    });
  });

  it('reads the NKEY seed file (an unreadable one fails the connect attempt, named)', () => {
    expect(() => natsConnectOptions({ url: 'nats://n', nkeySeedFile: '/no/such.nk' })).toThrow(
      /ENOENT.*\/no\/such\.nk/,
    );
  });
});

describe('a NATS URL in a log (urlOrigin)', () => {
  it('drops the user, password and token, keeps the rest', () => {
    expect(urlOrigin('tls://ledger:s3cret@nats.example:4222')).toBe('tls://nats.example:4222');
    expect(urlOrigin('nats://t0ken@nats:4222')).toBe('nats://nats:4222');
    expect(urlOrigin('nats://127.0.0.1:4222')).toBe('nats://127.0.0.1:4222');
  });
});
