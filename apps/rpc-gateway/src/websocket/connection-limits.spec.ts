import { callsIn, TokenConnections } from './connection-limits';

describe('callsIn: the calls a WebSocket message holds, for the in-flight cap', () => {
  it.each([
    ['{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}', 1],
    ['  [ {"id":1}, {"id":2} ]', 2],
    ['[{"id":1,"params":["a,b",[1,2],{"x":"]"}]},{"id":2},{"id":3}]', 3],
    ['[{"id":"\\",\\""},{"id":2}]', 2],
    ['[1,2,3,4]', 4],
    ['[]', 1],
    ['[  ]', 1],
    ['not json', 1],
    ['[{"id":1},', 2],
    ['[{"id":1},{"id":2', 2],
  ])('%s → %i', (text, calls) => expect(callsIn(text)).toBe(calls));
});

describe('TokenConnections: open WebSocket connections per access token', () => {
  it('takes up to the cap per token, gives back, and counts tokens apart', () => {
    const open = new TokenConnections(2);
    expect([open.take('a'), open.take('a'), open.take('a')]).toEqual([true, true, false]);
    expect(open.take('b')).toBe(true);
    open.give('a');
    expect(open.of('a')).toBe(1);
    expect(open.take('a')).toBe(true);
    open.give('a');
    open.give('a');
    expect(open.of('a')).toBe(0);
  });
});
