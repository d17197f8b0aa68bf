import { parseConfig } from '@meridian/platform-config';
import { configSchema } from './config';

const base = { HTTP_PORT: '8080', DATABASE_URL: 'postgres://audit:pw@127.0.0.1:5432/meridian' };

describe('audit-api config: AUDIT_RPC_URL', () => {
  it('takes empty as unset (compose passes ${AUDIT_RPC_URL:-} until a token exists)', () => {
    const parsed = configSchema.safeParse({ ...base, AUDIT_RPC_URL: '' });
    expect(parsed.success).toBe(true);
    expect(parsed.data?.AUDIT_RPC_URL).toBeUndefined();
    expect(configSchema.parse(base).AUDIT_RPC_URL).toBeUndefined();
  });

  it('still refuses a URL that is not http(s), and the placeholder', () => {
    expect(configSchema.safeParse({ ...base, AUDIT_RPC_URL: 'ftp://x/' }).success).toBe(false);
    expect(
      configSchema.safeParse({ ...base, AUDIT_RPC_URL: 'http://gw:8080/CHANGE-ME-token/' }).success,
    ).toBe(false);
    expect(configSchema.parse({ ...base, AUDIT_RPC_URL: 'http://gw:8080/t/' }).AUDIT_RPC_URL).toBe(
      'http://gw:8080/t/',
    );
  });
});

/** The same rule as every app that dials billing-ledger (`grpcTargetSetting`, QA VV). */
describe('audit-api config: BILLING_GRPC_URL', () => {
  it.each(['http://billing-ledger:9090', 'billing-ledger', 'billing-ledger:9090/x'])(
    'refuses %j at start in one line naming it',
    (value) => {
      expect(() => parseConfig(configSchema, { ...base, BILLING_GRPC_URL: value })).toThrow(
        'config error: BILLING_GRPC_URL is invalid: must be host:port (or dns:///host:port): no scheme such as http://, no path',
      );
    },
  );

  it('takes host:port and dns:///host:port', () => {
    for (const value of ['billing-ledger:9090', 'dns:///billing-ledger.meridian.svc:9090'])
      expect(parseConfig(configSchema, { ...base, BILLING_GRPC_URL: value }).BILLING_GRPC_URL).toBe(
        value,
      );
  });
});
