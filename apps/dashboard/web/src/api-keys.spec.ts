import { API_SCOPES, curlExampleOf, offeredScopes } from './api-keys';

describe('the REST APIs on the API keys page', () => {
  it('makes one curl line per API on its base, a trailing slash or not', () => {
    expect(curlExampleOf('webhooks', 'https://api.example.com/api/v1/')).toBe(
      'curl -s https://api.example.com/api/v1/webhooks -H "authorization: Bearer <API key>"',
    );
    expect(curlExampleOf('account', 'https://api.example.com/api/v1')).toBe(
      'curl -s https://api.example.com/api/v1/account/balance -H "authorization: Bearer <API key>"',
    );
    expect(curlExampleOf('audit', 'https://audit.example.com/v1')).toMatch(
      /^curl -s -X POST https:\/\/audit\.example\.com\/v1\/wallet-audit\/check /,
    );
  });
});

describe('the scopes the API keys page offers', () => {
  it('offers the plan scope to an owner only (a member is refused owner_required), and names no API for it', () => {
    const ids = (role: 'owner' | 'member' | null) => offeredScopes(role).map((scope) => scope.id);
    expect(ids('owner')).toEqual(['webhooks', 'account', 'plan', 'audit']);
    expect(ids('member')).toEqual(['webhooks', 'account', 'audit']);
    expect(ids(null)).toEqual(['webhooks', 'account', 'audit']);
    expect(offeredScopes('owner').find((scope) => scope.id === 'plan')?.description).toBe(
      "changes the account's plan (with Account; owners only)",
    );
    expect(API_SCOPES.map((scope) => scope.id)).toEqual(['webhooks', 'account', 'audit']);
  });
});
