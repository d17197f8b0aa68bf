import {
  decodeFilterId,
  encodeFilterId,
  encodeFloorFilterId,
  splitFloor,
  upstreamFloorTag,
  upstreamTag,
} from './filter-id';
import { isAlreadyKnown, mayRetry } from './send-policy';
import { lagToleranceBlocks, selectUpstream } from './upstream-selector';

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

  it('the best height first, busier or not; a node within the lag window only when none at it can (QA: 123, 121, 124, 121…)', () => {
    const nodes = [u(0, true, 121), u(1, true, 124, 7), u(2, true, 124, 7)];
    const picks = [0, 1, 2, 3].map((cursor) => selectUpstream(nodes, { maxLagBlocks: 5, cursor }));
    expect(picks).toEqual([1, 2, 1, 2]);
    expect(selectUpstream(nodes, { exclude: new Set([1, 2]), maxLagBlocks: 5, cursor: 0 })).toBe(0);
  });

  it('a node its breaker refuses is picked in no tier, and sets no best height', () => {
    const nodes = [u(0, false, 100), u(1, true, 130), u(2, true, 120)];
    const usable = (index: number) => index !== 1;
    expect(selectUpstream(nodes, { maxLagBlocks: 5, cursor: 0, usable })).toBe(2);
    expect(
      selectUpstream(nodes, { exclude: new Set([2]), maxLagBlocks: 5, cursor: 0, usable }),
    ).toBe(0);
    expect(
      selectUpstream(nodes, {
        exclude: new Set([2]),
        maxLagBlocks: 5,
        cursor: 0,
        usable: () => false,
      }),
    ).toBeUndefined();
  });
});

describe("lagToleranceBlocks: one time, each network's blocks (ADR 0202 amendment)", () => {
  it.each([
    ['S checkpoints (250 ms)', 250, 40],
    ['R (1 s)', 1_000, 10],
    ['P (2 s)', 2_000, 5],
    ['E (12 s): at least one block', 12_000, 1],
  ])('%s', (_name, blockTimeMs, blocks) =>
    expect(lagToleranceBlocks(blockTimeMs, 10_000, undefined)).toBe(blocks),
  );
  it('MAX_LAG_BLOCKS, when set, for every network', () =>
    expect(lagToleranceBlocks(250, 10_000, 5)).toBe(5));
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
