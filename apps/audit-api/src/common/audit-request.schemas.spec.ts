import { parseAuditRequest } from './audit-request';
import { rugPullRequestSchema, walletRequestSchema } from './audit-request.schemas';

const ADDRESS = '0x000000000000000000000000000000000000dEaD';

describe('audit request schemas agree with parseAuditRequest', () => {
  it.each([
    ['a valid body', { network: 'ETH', address: ADDRESS }],
    ['no network', { address: ADDRESS }],
    ['an empty network', { network: '', address: ADDRESS }],
    ['a numeric network', { network: 1, address: ADDRESS }],
    ['no address', { network: 'ETH' }],
    ['a numeric address', { network: 'ETH', address: 12 }],
    ['null', null],
    ['an array', []],
    ['a string', 'ETH'],
    ['an unknown field', { network: 'ETH', address: ADDRESS, tag: 'x' }],
  ])('wallet: %s', (_name, body) => {
    const schemaOk = walletRequestSchema.safeParse(body).success;
    const parserOk = (() => {
      try {
        parseAuditRequest({ body, query: {} }, 'address');
        return true;
      } catch {
        return false;
      }
    })();
    if (!schemaOk) expect(parserOk).toBe(false);
    if (parserOk) expect(schemaOk).toBe(true);
  });

  it.each([
    ['a valid body', { network: 'ETH', contract_address: ADDRESS }, true],
    ['the wallet field instead', { network: 'ETH', address: ADDRESS }, false],
    ['an empty contract', { network: 'ETH', contract_address: '' }, false],
    ['both fields', { network: 'ETH', contract_address: ADDRESS, address: ADDRESS }, false],
  ])('rug pull: %s', (_name, body, valid) => {
    expect(rugPullRequestSchema.safeParse(body).success).toBe(valid);
    const request = { body, query: {} };
    if (!valid) expect(() => parseAuditRequest(request, 'contract_address')).toThrow();
    else expect(() => parseAuditRequest(request, 'contract_address')).not.toThrow();
  });
});
