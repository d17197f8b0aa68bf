import { checkSubscribeParams, checkUnsubscribeParams } from './subscribe-params';

const ADDRESS = `0x${'12'.repeat(20)}`;
const TOPIC = `0x${'cd'.repeat(32)}`;
const check = (params: unknown[]) => checkSubscribeParams(params, JSON.stringify(params));

describe('eth_subscribe params, checked before a subscription is shared', () => {
  it.each([
    [['newHeads']],
    [['newPendingTransactions']],
    [['logs']],
    [['logs', {}]],
    [['logs', { address: ADDRESS }]],
    [['logs', { address: [ADDRESS, ADDRESS.toUpperCase().replace('0X', '0x')] }]],
    [['logs', { address: null, topics: null }]],
    [['logs', { topics: [TOPIC] }]],
    [['logs', { topics: [null, [TOPIC, null], TOPIC, []] }]],
    [['logs', { address: ADDRESS, topics: [TOPIC], fromBlock: 'latest' }]],
  ])('%j may be shared', (params) => {
    expect(check(params)).toBeNull();
  });

  it.each([
    [[], 'subscription type'],
    [['blocks'], 'subscription type'],
    [[7], 'subscription type'],
    [['logs', null], 'filter object'],
    [['logs', 'x'], 'filter object'],
    [['logs', [ADDRESS]], 'filter object'],
    // QA: identical calls of these got -32000 while they waited on the first one's refusal.
    [['logs', { address: '0x12' }], 'address'],
    [['logs', { address: [ADDRESS, 5] }], 'address'],
    [['logs', { topics: ['0x12'] }], 'topics'],
    [['logs', { topics: TOPIC }], 'topics'],
    [['logs', { topics: [TOPIC, TOPIC, TOPIC, TOPIC, TOPIC] }], 'topics'],
    [['logs', { topics: [[[TOPIC]]] }], 'topics'],
    [['logs', { topics: [[5]] }], 'topics'],
    // The rule of eth_getLogs filters (log-filter.ts): block bounds and blockHash too.
    [['logs', { fromBlock: 'garbage' }], 'fromBlock'],
    [['logs', { blockHash: '0x12' }], 'blockHash'],
  ])('%j is invalid params (%s)', (params, what) => {
    const error = check(params);
    expect(error).toMatchObject({ kind: 'invalid', code: 'invalid_params' });
    expect(error?.message).toContain(what);
  });

  it('params nested 200,000 deep are refused from their text, without walking them', () => {
    // QA deep6.json: a logs filter whose topics nest 200,000 lists deep got -32000.
    const raw = `["logs",{"topics":${'['.repeat(200_000)}${']'.repeat(200_000)}}]`;
    expect(checkSubscribeParams(['logs', { topics: [] }], raw)?.message).toContain(
      'deeper than 8 levels',
    );
    // Brackets inside strings are not nesting.
    const quoted = ['logs', { topics: [TOPIC], note: '[[[[[[[[[[[[[[' }];
    expect(check(quoted)).toBeNull();
  });
});

describe('eth_unsubscribe params', () => {
  it('one subscription id is well formed', () => {
    expect(checkUnsubscribeParams(['0xabc'])).toBeNull();
  });

  it.each([[[]], [[123, { x: 1 }]], [[123]], [['0xabc', 'extra']], [[null]]])(
    '%j is invalid params',
    (params) => {
      expect(checkUnsubscribeParams(params)).toMatchObject({ kind: 'invalid' });
    },
  );
});
