import { parseConfig } from '@meridian/platform-config';
import { configSchema } from './config';

describe('FILTER_ID_KEY', () => {
  const env = { REGION: 'eu', HTTP_PORT: '8080' };
  const key = 'a'.repeat(32);

  it('is required with NODE_ENV=production, naming what it is for', () => {
    expect(() => parseConfig(configSchema, { ...env, NODE_ENV: 'production' })).toThrow(
      /FILTER_ID_KEY.*required with NODE_ENV=production.*filter not found/s,
    );
    expect(
      parseConfig(configSchema, { ...env, NODE_ENV: 'production', FILTER_ID_KEY: key })
        .FILTER_ID_KEY,
    ).toBe(key);
  });

  it('may be unset elsewhere (a random key per replica) and is at least 32 characters', () => {
    expect(parseConfig(configSchema, env).FILTER_ID_KEY).toBeUndefined();
    expect(() => parseConfig(configSchema, { ...env, FILTER_ID_KEY: 'short' })).toThrow(
      /FILTER_ID_KEY.*at least 32 characters/s,
    );
  });
});

/**
 * Malformed upstream variables (QA, operator angle): one `config error` line naming the variable
 * at start, as every other variable gets, not a raw SyntaxError or "TypeError: Invalid URL"
 * thrown after Nest's start-up lines.
 */
describe('UPSTREAMS and SUI_UPSTREAM_URLS', () => {
  const env = { REGION: 'eu', HTTP_PORT: '8080' };

  it.each([
    [
      { UPSTREAMS: '{"eth-mainnet":["http://x"],}' },
      'config error: UPSTREAMS is invalid: must be a JSON object (network key → URLs)',
    ],
    [
      { UPSTREAMS: '{"eth-mainnet":["notaurl"]}' },
      'config error: UPSTREAMS is invalid: eth-mainnet.0: Invalid URL',
    ],
    [
      { SUI_UPSTREAM_URLS: 'notaurl' },
      'config error: SUI_UPSTREAM_URLS is invalid: "notaurl" is not a URL (node URLs, comma separated)',
    ],
    [
      { SUI_UPSTREAM_URLS: 'https://sui.example, notaurl' },
      'config error: SUI_UPSTREAM_URLS is invalid: "notaurl" is not a URL (node URLs, comma separated)',
    ],
  ])('%j is refused in one line naming it', (given, line) => {
    expect(() => parseConfig(configSchema, { ...env, ...given })).toThrow(line);
  });

  it('parses valid values (both unset: no network)', () => {
    const config = parseConfig(configSchema, {
      ...env,
      UPSTREAMS: '{"eth-mainnet":["http://eth.example:8545"]}',
      SUI_UPSTREAM_URLS: 'https://s1.example, https://s2.example',
    });
    expect(config.UPSTREAMS.get('eth-mainnet')?.map((u) => u.url)).toEqual([
      'http://eth.example:8545',
    ]);
    expect(config.SUI_UPSTREAM_URLS).toEqual(['https://s1.example', 'https://s2.example']);
    const bare = parseConfig(configSchema, env);
    expect([bare.UPSTREAMS.size, bare.SUI_UPSTREAM_URLS]).toEqual([0, []]);
  });
});

describe('FINALITY_DEPTH_BLOCKS', () => {
  it('is refused, naming where finality is defined now (each network reorg window)', () => {
    const env = { REGION: 'eu', HTTP_PORT: '8080' };
    expect(() => parseConfig(configSchema, { ...env, FINALITY_DEPTH_BLOCKS: '64' })).toThrow(
      /FINALITY_DEPTH_BLOCKS.*no longer read.*reorg window/s,
    );
    expect(() => parseConfig(configSchema, env)).not.toThrow();
  });
});

describe('MAX_RESPONSE_BYTES', () => {
  const env = { REGION: 'eu', HTTP_PORT: '8080' };

  it('is 32 MiB by default, and an integer from 1 MiB to 256 MiB (ADR 0215)', () => {
    expect(parseConfig(configSchema, env).MAX_RESPONSE_BYTES).toBe(32 * 1024 * 1024);
    expect(
      parseConfig(configSchema, { ...env, MAX_RESPONSE_BYTES: '8388608' }).MAX_RESPONSE_BYTES,
    ).toBe(8 * 1024 * 1024);
    for (const bad of ['1000', '300000000', '2097152.5', 'lots'])
      expect(() => parseConfig(configSchema, { ...env, MAX_RESPONSE_BYTES: bad })).toThrow(
        /MAX_RESPONSE_BYTES/,
      );
  });
});

describe('MAX_ANSWER_BYTES_IN_FLIGHT', () => {
  const env = { REGION: 'eu', HTTP_PORT: '8080' };
  const MIB = 1024 * 1024;

  it('is 64 MiB by default, an integer up to 1 GiB, and at least MAX_RESPONSE_BYTES (ADR 0215)', () => {
    expect(parseConfig(configSchema, env).MAX_ANSWER_BYTES_IN_FLIGHT).toBe(64 * MIB);
    expect(
      parseConfig(configSchema, { ...env, MAX_ANSWER_BYTES_IN_FLIGHT: String(256 * MIB) })
        .MAX_ANSWER_BYTES_IN_FLIGHT,
    ).toBe(256 * MIB);
    expect(
      parseConfig(configSchema, {
        ...env,
        MAX_RESPONSE_BYTES: String(8 * MIB),
        MAX_ANSWER_BYTES_IN_FLIGHT: String(8 * MIB),
      }).MAX_ANSWER_BYTES_IN_FLIGHT,
    ).toBe(8 * MIB);
    for (const bad of [String(16 * MIB), String(2048 * MIB), '67108864.5', 'lots'])
      expect(() => parseConfig(configSchema, { ...env, MAX_ANSWER_BYTES_IN_FLIGHT: bad })).toThrow(
        /MAX_ANSWER_BYTES_IN_FLIGHT/,
      );
  });
});

/**
 * Malformed addresses (QA M4): refused at start in one `config error` line naming the variable,
 * not a gateway that looks ready while every call fails (BILLING_GRPC_URL) or one that falls
 * back to per-process limits with a vague warning (RATE_LIMIT_REDIS_URL).
 */
describe('BILLING_GRPC_URL and RATE_LIMIT_REDIS_URL', () => {
  const env = { REGION: 'eu', HTTP_PORT: '8080' };
  const grpcLine =
    'config error: BILLING_GRPC_URL is invalid: must be host:port (or dns:///host:port): no scheme such as http://, no path';
  const redisLine =
    'config error: RATE_LIMIT_REDIS_URL is invalid: must be a redis:// or rediss:// URL: redis[s]://[user:password@]host[:port][/db]';

  it.each([
    'http://x:1/y',
    'x:1/y',
    'billing-ledger',
    'billing-ledger:',
    'billing-ledger:0',
    'billing-ledger:70000',
    'grpc://billing-ledger:9090',
    '',
  ])('BILLING_GRPC_URL=%j is refused in one line naming it', (value) => {
    expect(() => parseConfig(configSchema, { ...env, BILLING_GRPC_URL: value })).toThrow(grpcLine);
  });

  it.each([
    'billing-ledger.meridian.svc.cluster.local:9090',
    '127.0.0.1:9090',
    '[::1]:9090',
    'dns:///billing-ledger:9090',
    'dns:billing-ledger:9090',
  ])('BILLING_GRPC_URL=%j is taken as given', (value) => {
    expect(parseConfig(configSchema, { ...env, BILLING_GRPC_URL: value }).BILLING_GRPC_URL).toBe(
      value,
    );
  });

  it('BILLING_GRPC_URL defaults to 127.0.0.1:9090', () => {
    expect(parseConfig(configSchema, env).BILLING_GRPC_URL).toBe('127.0.0.1:9090');
  });

  it.each([
    'notaurl',
    'redis.example:6379',
    'http://redis.example:6379',
    'redis://',
    'redis://redis.example:6379/cache',
  ])('RATE_LIMIT_REDIS_URL=%j is refused in one line naming it', (value) => {
    expect(() => parseConfig(configSchema, { ...env, RATE_LIMIT_REDIS_URL: value })).toThrow(
      redisLine,
    );
  });

  it('does not echo a refused RATE_LIMIT_REDIS_URL (it may hold a password)', () => {
    const given = 'http://:hunter2-secret@redis.example:6379';
    expect(() => parseConfig(configSchema, { ...env, RATE_LIMIT_REDIS_URL: given })).toThrow(
      redisLine,
    );
    try {
      parseConfig(configSchema, { ...env, RATE_LIMIT_REDIS_URL: given });
    } catch (error) {
      expect((error as Error).message).not.toContain('hunter2');
    }
  });

  it.each([
    '',
    'redis://redis.redis.svc.cluster.local:6379',
    'rediss://:pass@redis.example:6380/2',
    'redis://user:pass@127.0.0.1',
  ])('RATE_LIMIT_REDIS_URL=%j is taken (empty: unset)', (value) => {
    expect(
      parseConfig(configSchema, { ...env, RATE_LIMIT_REDIS_URL: value }).RATE_LIMIT_REDIS_URL,
    ).toBe(value);
  });
});
