import {
  certificateFile,
  commonEnv,
  ConfigError,
  grpcTlsOf,
  natsSettingsOf,
  parseConfig,
  privateKeyFile,
  transportEnv,
} from '@meridian/platform-config';
import { z } from 'zod';
import { TestPki, type TestCa, type TestIdentity } from '../test-pki';

/** The transport settings of every app (commonEnv), checked at start with real PEM files. */

const schema = z.object({ NATS_URL: commonEnv.NATS_URL, ...transportEnv });
const parse = (env: Record<string, string>) => parseConfig(schema, env);
const refused = (env: Record<string, string>) => {
  try {
    parse(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  return 'accepted';
};

let pki: TestPki;
let ca: TestCa;
let a: TestIdentity;
let b: TestIdentity;

beforeAll(async () => {
  pki = new TestPki();
  ca = await pki.ca();
  a = await ca.issue('billing-ledger');
  b = await ca.issue('rpc-gateway');
});

afterAll(() => pki.remove());

describe('gRPC TLS settings', () => {
  it('are all optional: none set is plaintext, and empty is unset', () => {
    expect(grpcTlsOf(parse({}))).toEqual({
      requireClientCert: false,
      refreshIntervalMs: 3_600_000,
    });
    expect(grpcTlsOf(parse({ GRPC_TLS_CA_FILE: '', GRPC_TLS_SERVER_NAME: '' }))).toEqual({
      requireClientCert: false,
      refreshIntervalMs: 3_600_000,
    });
  });

  it('take a CA, a certificate with its key, client auth and a server name', () => {
    const config = parse({
      GRPC_TLS_CA_FILE: ca.certFile,
      GRPC_TLS_CERT_FILE: a.certFile,
      GRPC_TLS_KEY_FILE: a.keyFile,
      GRPC_TLS_CLIENT_AUTH: 'require',
      GRPC_TLS_SERVER_NAME: 'billing-ledger',
      GRPC_TLS_REFRESH_SECONDS: '600',
    });
    expect(grpcTlsOf(config)).toEqual({
      caFile: ca.certFile,
      certFile: a.certFile,
      keyFile: a.keyFile,
      requireClientCert: true,
      serverName: 'billing-ledger',
      refreshIntervalMs: 600_000,
    });
  });

  it('refuse a refresh interval that is no whole number of seconds from 1 to a day', () => {
    for (const value of ['0', '1.5', '86401', 'hourly'])
      expect(refused({ GRPC_TLS_REFRESH_SECONDS: value })).toMatch(
        /^config error: GRPC_TLS_REFRESH_SECONDS is invalid: /,
      );
  });

  it('refuse an unreadable file, naming the variable and the path', () => {
    expect(refused({ GRPC_TLS_CA_FILE: `${pki.dir}/missing.crt` })).toBe(
      `config error: GRPC_TLS_CA_FILE is invalid: cannot be read (${pki.dir}/missing.crt: ENOENT)`,
    );
  });

  it('refuse a file of the wrong kind (a key given as the certificate, a broken PEM)', () => {
    expect(refused({ GRPC_TLS_CERT_FILE: a.keyFile, GRPC_TLS_KEY_FILE: a.keyFile })).toMatch(
      /^config error: GRPC_TLS_CERT_FILE is invalid: holds no PEM certificate/,
    );
    const broken = pki.file(
      'broken.crt',
      '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
    );
    expect(refused({ GRPC_TLS_CA_FILE: broken })).toMatch(
      /^config error: GRPC_TLS_CA_FILE is invalid: holds an unreadable certificate/,
    );
  });

  it('refuse a certificate without its key, a key without its certificate', () => {
    expect(refused({ GRPC_TLS_CERT_FILE: a.certFile })).toBe(
      'config error: GRPC_TLS_KEY_FILE is required: GRPC_TLS_CERT_FILE is set',
    );
    expect(refused({ GRPC_TLS_KEY_FILE: a.keyFile })).toBe(
      'config error: GRPC_TLS_CERT_FILE is required: GRPC_TLS_KEY_FILE is set',
    );
  });

  it('refuse the key of another certificate', () => {
    expect(refused({ GRPC_TLS_CERT_FILE: a.certFile, GRPC_TLS_KEY_FILE: b.keyFile })).toBe(
      "config error: GRPC_TLS_KEY_FILE is invalid: not the key of GRPC_TLS_CERT_FILE's certificate",
    );
  });

  it('refuse client authentication without a CA or without a server certificate', () => {
    expect(
      refused({
        GRPC_TLS_CERT_FILE: a.certFile,
        GRPC_TLS_KEY_FILE: a.keyFile,
        GRPC_TLS_CLIENT_AUTH: 'require',
      }),
    ).toBe('config error: GRPC_TLS_CA_FILE is required: GRPC_TLS_CLIENT_AUTH=require');
    expect(refused({ GRPC_TLS_CA_FILE: ca.certFile, GRPC_TLS_CLIENT_AUTH: 'require' })).toBe(
      'config error: GRPC_TLS_CERT_FILE is required: GRPC_TLS_CLIENT_AUTH=require',
    );
  });
});

describe("an app's own TLS pair (rpc-gateway's PUBLIC_GRPC_TLS_*)", () => {
  const own = z.object({
    PUBLIC_GRPC_TLS_CERT_FILE: certificateFile,
    PUBLIC_GRPC_TLS_KEY_FILE: privateKeyFile,
  });
  const refusedOwn = (env: Record<string, string>) => {
    try {
      parseConfig(own, env);
      return 'accepted';
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('is checked like the common pairs: both or neither, the key of that certificate', () => {
    expect(refusedOwn({ PUBLIC_GRPC_TLS_CERT_FILE: a.certFile })).toBe(
      'config error: PUBLIC_GRPC_TLS_KEY_FILE is required: PUBLIC_GRPC_TLS_CERT_FILE is set',
    );
    expect(
      refusedOwn({ PUBLIC_GRPC_TLS_CERT_FILE: a.certFile, PUBLIC_GRPC_TLS_KEY_FILE: b.keyFile }),
    ).toMatch(/PUBLIC_GRPC_TLS_KEY_FILE is invalid: not the key/);
    expect(
      refusedOwn({ PUBLIC_GRPC_TLS_CERT_FILE: a.certFile, PUBLIC_GRPC_TLS_KEY_FILE: a.keyFile }),
    ).toBe('accepted');
  });
});

describe('NATS settings', () => {
  const seed = () => pki.file('u.nk', `SU${'A'.repeat(56)}\n`);
  const creds = () =>
    pki.file(
      'u.creds',
      '-----BEGIN NATS USER JWT-----\neyJ0\n------END NATS USER JWT------\n' +
        '-----BEGIN USER NKEY SEED-----\nSUAAA\n------END USER NKEY SEED------\n',
    );

  it('map to the client: TLS files turn TLS on, none leave it off', () => {
    expect(natsSettingsOf(parse({ NATS_URL: 'nats://n:4222' }))).toEqual({
      url: 'nats://n:4222',
    });
    const withTls = natsSettingsOf(
      parse({
        NATS_URL: 'tls://ledger:pw@n:4222',
        NATS_TLS_CA_FILE: ca.certFile,
        NATS_TLS_CERT_FILE: a.certFile,
        NATS_TLS_KEY_FILE: a.keyFile,
      }),
    );
    expect(withTls).toEqual({
      url: 'tls://ledger:pw@n:4222',
      tls: { caFile: ca.certFile, certFile: a.certFile, keyFile: a.keyFile },
    });
  });

  it('refuse a placeholder password or token in NATS_URL, like DATABASE_URL', () => {
    for (const url of ['nats://ledger:CHANGE-ME@n:4222', 'nats://change-me-token@n:4222'])
      expect(refused({ NATS_URL: url })).toBe(
        'config error: NATS_URL is invalid: its password or token holds the placeholder CHANGE-ME; set a secret of your own',
      );
    expect(refused({ NATS_URL: 'nats://ledger:s3cret@exchange-nats:4222' })).toBe('accepted');
  });

  it('refuse files that are no creds or seed, and two identities at once', () => {
    expect(refused({ NATS_CREDS_FILE: a.certFile })).toMatch(
      /^config error: NATS_CREDS_FILE is invalid: is no NATS \.creds file/,
    );
    expect(refused({ NATS_NKEY_SEED_FILE: a.keyFile })).toMatch(
      /^config error: NATS_NKEY_SEED_FILE is invalid: holds no NKEY user seed/,
    );
    expect(refused({ NATS_CREDS_FILE: creds(), NATS_NKEY_SEED_FILE: seed() })).toBe(
      'config error: NATS_NKEY_SEED_FILE is invalid: NATS_CREDS_FILE is set too (one NATS identity)',
    );
    expect(refused({ NATS_URL: 'nats://ledger:pw@n:4222', NATS_NKEY_SEED_FILE: seed() })).toBe(
      'config error: NATS_URL is invalid: carries a user or token while NATS_NKEY_SEED_FILE is set (one NATS identity)',
    );
    expect(refused({ NATS_CREDS_FILE: creds() })).toBe('accepted');
  });

  it('refuse a client certificate without its key', () => {
    expect(refused({ NATS_TLS_CERT_FILE: a.certFile })).toBe(
      'config error: NATS_TLS_KEY_FILE is required: NATS_TLS_CERT_FILE is set',
    );
  });
});

describe("DATABASE_URL's TLS parameters (read by node-postgres itself)", () => {
  const db = z.object({ DATABASE_URL: commonEnv.DATABASE_URL });
  const refusedDb = (query: string) => {
    try {
      parseConfig(db, { DATABASE_URL: `postgres://app:pw@db:5432/meridian?${query}` });
      return 'accepted';
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('accept verify-full with a CA file, and a client certificate with its key', () => {
    expect(refusedDb(`sslmode=verify-full&sslrootcert=${ca.certFile}`)).toBe('accepted');
    expect(
      refusedDb(
        `sslmode=verify-full&sslrootcert=${ca.certFile}&sslcert=${a.certFile}&sslkey=${a.keyFile}`,
      ),
    ).toBe('accepted');
  });

  it('refuse an sslmode node-postgres does not know, naming the ones it does', () => {
    expect(refusedDb('sslmode=verify_full')).toBe(
      'config error: DATABASE_URL is invalid: sslmode=verify_full is none of disable, no-verify, prefer, require, verify-ca, verify-full',
    );
  });

  it('refuse an unreadable or wrong sslrootcert, and a client certificate without its key', () => {
    expect(refusedDb(`sslmode=verify-full&sslrootcert=${pki.dir}/missing.crt`)).toBe(
      `config error: DATABASE_URL is invalid: its sslrootcert cannot be read (${pki.dir}/missing.crt: ENOENT)`,
    );
    expect(refusedDb(`sslrootcert=${a.keyFile}`)).toMatch(
      /^config error: DATABASE_URL is invalid: its sslrootcert holds no PEM certificate/,
    );
    expect(refusedDb(`sslcert=${a.certFile}`)).toBe(
      'config error: DATABASE_URL is invalid: its sslcert is given without its sslkey',
    );
    expect(refusedDb(`sslcert=${a.certFile}&sslkey=${b.keyFile}`)).toBe(
      "config error: DATABASE_URL is invalid: its sslkey is not the key of its sslcert's certificate",
    );
  });
});
