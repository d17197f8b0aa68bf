import { callsAsParsed, parseRequest } from '@meridian/jsonrpc';
import { callSlotsOf, TokenConnections } from './connection-limits';

describe('callSlotsOf: the slots a WebSocket message takes in the in-flight cap', () => {
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
  ])('%s → %i', (text, calls) => expect(callSlotsOf(text)).toBe(calls));
});

/**
 * Two counts, two rules: the in-flight cap's slots (scanned before any parse, at least 1: every
 * message is owed an answer) and the request log's calls (`callsAsParsed`: what the parsed
 * request held). They agree on well-formed requests and part on text that is not one.
 */
describe("callSlotsOf and the request log's callsAsParsed", () => {
  const both = (text: string) => [callSlotsOf(text), callsAsParsed(parseRequest(text))];

  it.each([
    ['{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}', 1],
    ['[{"jsonrpc":"2.0","id":1,"method":"m"},{"jsonrpc":"2.0","id":2,"method":"m"}]', 2],
    ['[1,2,3]', 3],
  ])('agree on %s: %i', (text, calls) => expect(both(text)).toEqual([calls, calls]));

  it.each([
    ['[]', 1, 0],
    ['not json', 1, 0],
    ['[{"id":1},', 2, 0],
  ])('part on %s: %i slots, %i calls', (text, slots, calls) =>
    expect(both(text)).toEqual([slots, calls]),
  );
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
