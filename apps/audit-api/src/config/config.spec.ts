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
