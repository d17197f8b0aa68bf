import { plainFieldMessage } from './field-messages';

describe('plainFieldMessage', () => {
  it.each([
    ['body.confirm_depth: Too big: expected number to be <=96', 'must be at most 96'],
    ['body.confirm_depth: Too small: expected number to be >=2', 'must be at least 2'],
    ['body.count: Too big: expected number to be <100000', 'must be less than 100,000'],
    [
      'body.name: Too big: expected string to have <=200 characters',
      'must be at most 200 characters',
    ],
    ['body.addresses: Too small: expected array to have >=1 items', 'must be at least 1 item'],
    ['body.list_refs[2]: Too small: expected number to be >0', 'must be more than 0'],
    ['body.confirm_depth: Invalid input: expected number, received string', 'must be a number'],
    ['Too big: expected number to be <=96', 'must be at most 96'],
  ])('%s → %s', (raw, plain) => {
    expect(plainFieldMessage(raw)).toBe(plain);
  });

  it('says several issues of one value once each, the tightest bound only', () => {
    // A top-up of 99999999999999999999 CU (billing-ledger's cu: int, at most 10^12).
    expect(
      plainFieldMessage(
        'body.cu: Too big: expected int to be <=9007199254740991; body.cu: Too big: expected number to be <=1000000000000',
      ),
    ).toBe('must be at most 1,000,000,000,000');
    expect(
      plainFieldMessage(
        'body.name: Too small: expected string to have >=1 characters; body.name: Invalid input: expected string, received number',
      ),
    ).toBe('must be at least 1 character; must be a string');
  });

  it('leaves the messages the APIs wrote for people as they are, without their location', () => {
    expect(plainFieldMessage('the current password is wrong')).toBe(
      'the current password is wrong',
    );
    expect(
      plainFieldMessage('filters.tx_hash.in[1]: "0x1234" is not a 32-byte hex transaction hash'),
    ).toBe('"0x1234" is not a 32-byte hex transaction hash');
    expect(plainFieldMessage('body.target_url: use https')).toBe('use https');
    expect(plainFieldMessage('q: Too big: expected string to have <=200 characters')).toBe(
      'must be at most 200 characters',
    );
  });

  it('says the messages that name request fields in code as the form does (QA: `list_refs`)', () => {
    expect(plainFieldMessage('filters: give `filters`, `addresses` or `list_refs`')).toBe(
      'enter at least one address, or pick an address list',
    );
    expect(
      plainFieldMessage(
        'filters: a tx_confirmation webhook watches transaction hashes: every way its filter can match needs a `tx_hash` leaf',
      ),
    ).toBe('enter at least one transaction hash to watch');
  });
});
