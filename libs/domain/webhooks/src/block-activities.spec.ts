import { blockActivities, compareInBlock } from './block-activities';

describe("compareInBlock: an event's place in its block, as blockActivities yields it", () => {
  const tx = (index: number, hash = `0x${index}`) => ({
    hash,
    from: '0xa',
    to: '0xb',
    transactionIndex: `0x${index.toString(16)}`,
  });
  const log = (txIndex: number, logIndex: number) => ({
    address: '0xc',
    topics: [],
    transactionHash: `0x${txIndex}`,
    transactionIndex: `0x${txIndex.toString(16)}`,
    logIndex: `0x${logIndex.toString(16)}`,
  });

  it('sorts raws in the order blockActivities yields them: transactions, then logs, each by index', () => {
    const block = {
      transactions: [tx(0), tx(1), tx(10), tx(16)],
      receipts: [{ logs: [log(0, 0), log(0, 1)] }, { logs: [log(10, 2), log(16, 17)] }],
    };
    const live = [...blockActivities(block)].map((a) => a.raw);
    const shuffled = [live[5], live[2], live[7], live[0], live[4], live[1], live[6], live[3]];
    expect(shuffled.sort(compareInBlock)).toEqual(live);
  });

  it('puts what has no index first, and is zero for the same place', () => {
    expect(compareInBlock({}, tx(0))).toBe(0);
    expect(compareInBlock({}, log(0, 0))).toBeLessThan(0);
    expect(compareInBlock(log(3, 4), log(3, 4))).toBe(0);
    expect(compareInBlock(tx(2), tx(1))).toBeGreaterThan(0);
  });
});
