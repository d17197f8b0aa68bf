import { curlExampleOf } from './api-keys';

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
