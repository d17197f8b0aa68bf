import { TOKEN_PATH, tokenOf } from './token-path';

describe('token path', () => {
  it.each([
    ['/tok_1', 'tok_1'],
    ['/tok_1/', 'tok_1'],
    ['/tok_1/?a=1', 'tok_1'],
    ['/tok%5F1', 'tok_1'],
    ['/%zz', '%zz'],
    ['/%', '%'],
    ['/%E0%A4%A', '%E0%A4%A'],
  ])('%s → token %s (malformed percent-encoding left as sent)', (path, token) => {
    const match = TOKEN_PATH.exec(path);
    expect(match).not.toBeNull();
    expect(tokenOf(match![1]!)).toBe(token);
  });

  it.each(['/', '//', '/a/b', '/a//'])('%s is no token path', (path) => {
    expect(TOKEN_PATH.exec(path)).toBeNull();
  });
});
