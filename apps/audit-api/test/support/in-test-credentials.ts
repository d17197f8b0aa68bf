import type { ApiKeyPrincipal, CredentialSource } from '../../src/auth/credential-source';

/** Keys defined by a test (unit tests and benchmarks; API integration tests use the real billing-ledger). */
export class InTestCredentialSource implements CredentialSource {
  private readonly keys = new Map<string, ApiKeyPrincipal>();

  add(key: string, principal: Partial<ApiKeyPrincipal> & { planId: string | null }): this {
    this.keys.set(key, {
      keyId: `key_${key}`,
      accountId: `acc_${key}`,
      scopes: ['audit'],
      ...principal,
    });
    return this;
  }

  async resolveApiKey(key: string): Promise<ApiKeyPrincipal | null> {
    return this.keys.get(key) ?? null;
  }
}
