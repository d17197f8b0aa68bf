import { isDomainError } from '@meridian/errors';
import { checkTargetUrl } from './target-url';

const codeOf = (url: string, allowLoopback = false): string => {
  try {
    checkTargetUrl(url, { allowLoopback });
    return 'ok';
  } catch (error) {
    return isDomainError(error) ? error.code : 'thrown';
  }
};

describe('checkTargetUrl', () => {
  it('a refusal names the body field in the house form (location, path from the part)', () => {
    try {
      checkTargetUrl('http://hooks.example.com/in');
      throw new Error('accepted');
    } catch (error) {
      if (!isDomainError(error)) throw error;
      expect(error.details).toEqual({ location: 'body', path: 'body.target_url' });
    }
  });

  it.each([
    ['https://hooks.example.com/in', 'ok'],
    ['https://93.184.216.34:8443/x?y=1', 'ok'],
    ['https://[2606:4700::1111]/', 'ok'],
    ['http://hooks.example.com/in', 'target_url_not_https'],
    ['ftp://hooks.example.com/in', 'target_url_not_https'],
    ['not a url', 'target_url_invalid'],
    ['https://a.com:0/', 'target_url_invalid'],
    ['https://a.com:00000/x', 'target_url_invalid'],
    ['https://93.184.216.34:0/', 'target_url_invalid'],
    ['https://a.com:99999/', 'target_url_invalid'],
    ['https://a.com:1/', 'ok'],
    ['https://a.com:65535/', 'ok'],
    ['https://user:pw@hooks.example.com/', 'target_url_userinfo'],
    ['https://user@hooks.example.com/', 'target_url_userinfo'],
    ['https://hooks.example.com/#frag', 'target_url_fragment'],
    ['https://hooks.example.com/#', 'target_url_fragment'],
    ['https://10.0.0.1/', 'target_url_private_address'],
    ['https://127.0.0.1/', 'target_url_private_address'],
    ['https://2130706433/', 'target_url_private_address'], // decimal 127.0.0.1
    ['https://0177.0.0.1/', 'target_url_private_address'], // octal
    ['https://0x7f.0.0.1/', 'target_url_private_address'], // hex
    ['https://0x7f000001/', 'target_url_private_address'],
    ['https://0xa9.0xfe.0xa9.0xfe/', 'target_url_private_address'], // link-local metadata
    ['https://169.254.169.254/latest', 'target_url_private_address'],
    ['https://[::1]/', 'target_url_private_address'],
    ['https://[::ffff:10.1.2.3]/', 'target_url_private_address'],
    ['https://[::ffff:127.0.0.1]/', 'target_url_private_address'],
    ['https://[fc00::1]/', 'target_url_private_address'],
    ['https://[fe80::1]/', 'target_url_private_address'],
    ['https://0.0.0.0/', 'target_url_private_address'],
    ['https://100.64.0.1/', 'target_url_private_address'],
    ['https://localhost/', 'target_url_reserved_name'],
    ['https://LOCALHOST./', 'target_url_reserved_name'],
    ['https://printer.local/', 'target_url_reserved_name'],
    ['https://api.internal/', 'target_url_reserved_name'],
    ['https://a.test/', 'target_url_reserved_name'],
    ['https://a.invalid/', 'target_url_reserved_name'],
    ['https://x.example/', 'target_url_reserved_name'],
    ['https://intranet/', 'target_url_reserved_name'],
    [`https://a.com/${'x'.repeat(2100)}`, 'target_url_too_long'],
  ])('%s → %s', (url, code) => {
    expect(codeOf(url)).toBe(code);
  });

  it('allows loopback (http or https) only through the allow-list, never other private ranges', () => {
    expect(codeOf('http://127.0.0.1:9000/hook', true)).toBe('ok');
    expect(codeOf('https://localhost:9000/hook', true)).toBe('ok');
    expect(codeOf('http://[::1]:9000/', true)).toBe('ok');
    expect(codeOf('http://10.0.0.1/', true)).toBe('target_url_not_https');
    expect(codeOf('https://10.0.0.1/', true)).toBe('target_url_private_address');
    expect(codeOf('http://hooks.example.com/', true)).toBe('target_url_not_https');
    expect(codeOf('http://127.0.0.1:9000/hook')).toBe('target_url_not_https');
    expect(codeOf('http://127.0.0.1:0/hook', true)).toBe('target_url_invalid');
  });

  it('returns the normalised URL', () => {
    expect(checkTargetUrl('https://Hooks.Example.COM/In')).toBe('https://hooks.example.com/In');
  });
});
