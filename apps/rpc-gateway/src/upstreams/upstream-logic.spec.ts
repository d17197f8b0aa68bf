import {
  decodeFilterId,
  encodeFilterId,
  encodeFloorFilterId,
  splitFloor,
  upstreamFloorTag,
  upstreamTag,
} from './filter-id';
import { isAlreadyKnown, mayRetry } from './send-policy';
import { selectUpstream } from './upstream-selector';

describe('filter ids carry their upstream', () => {
  const tag = upstreamTag('http://node-a:8545');
  it.each(['0x1', '0xabcdef0123456789abcdef0123456789', '0x00'])('round-trips %s', (id) => {
    const encoded = encodeFilterId(tag, id)!;
    expect(decodeFilterId(encoded)).toEqual({ tag, upstreamFilterId: id });
  });
  it.each([undefined, 12, 'nope', '0x1234', '0x'])('rejects %j', (id) =>
    expect(decodeFilterId(id)).toBeUndefined(),
  );
  it('tags differ per URL', () =>
    expect(upstreamTag('http://a')).not.toBe(upstreamTag('http://b')));
  it('a growing log filter carries its fromBlock under the floor tag of its node (ADR 0211)', () => {
    const floorTag = upstreamFloorTag('http://node-a:8545');
    expect(floorTag).not.toBe(tag);
    const encoded = encodeFloorFilterId(floorTag, 0x1234, '0xabc')!;
    const decoded = decodeFilterId(encoded)!;
    expect(decoded.tag).toBe(floorTag);
    expect(splitFloor(decoded.upstreamFilterId)).toEqual({
      fromBlock: 0x1234,
      upstreamFilterId: '0xabc',
    });
    expect(encodeFloorFilterId(floorTag, -1, '0xabc')).toBeUndefined();
  });
});

describe('selectUpstream', () => {
  const u = (index: number, healthy: boolean, height: number | undefined, inFlight = 0) => ({
    index,
    healthy,
    height,
    inFlight,
  });
  it.each([
    ['healthy and in sync first', [u(0, false, 100), u(1, true, 100)], new Set<number>(), 1],
    ['lagging node avoided', [u(0, true, 90), u(1, true, 100)], new Set<number>(), 1],
    ['least in flight', [u(0, true, 100, 5), u(1, true, 100, 1)], new Set<number>(), 1],
    ['excluded skipped', [u(0, true, 100), u(1, true, 100)], new Set([0]), 1],
    ['unhealthy better than nothing', [u(0, false, 100)], new Set<number>(), 0],
    ['none left', [u(0, true, 100)], new Set([0]), undefined],
  ])('%s', (_name, upstreams, exclude, expected) => {
    expect(selectUpstream(upstreams, { exclude, maxLagBlocks: 5, cursor: 0 })).toBe(expected);
  });
});

describe('send policy', () => {
  it.each([
    [['eth_blockNumber'], 'ambiguous', true],
    [['eth_blockNumber'], 'bad_answer', true],
    [['eth_sendRawTransaction'], 'not_sent', true],
    [['eth_sendRawTransaction'], 'ambiguous', false],
    [['eth_sendRawTransaction'], 'bad_answer', false],
    [['eth_getFilterChanges'], 'not_sent', false],
    [['eth_call', 'eth_sendRawTransaction'], 'ambiguous', false],
  ] as const)('mayRetry(%j, %s) = %s', (methods, failure, expected) =>
    expect(mayRetry(methods, failure)).toBe(expected),
  );

  it.each([
    ['already known', false, true],
    ['ALREADY_EXISTS: transaction already exists', false, true],
    ['nonce too low', false, false],
    ['nonce too low', true, true],
    ['insufficient funds', true, false],
  ])('isAlreadyKnown(%s, resent=%s) = %s', (message, resent, expected) =>
    expect(isAlreadyKnown(message, resent)).toBe(expected),
  );
});
