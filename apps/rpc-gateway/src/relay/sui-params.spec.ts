import { checkSuiParams } from './sui-params';

describe('checkSuiParams', () => {
  it.each([
    ['suix_getLatestSuiSystemState', [], null],
    ['suix_getLatestSuiSystemState', [1], 'takes no parameters, got 1'],
    ['sui_tryMultiGetPastObjects', [[{ objectId: '0x5', version: '1' }]], null],
    [
      'sui_tryMultiGetPastObjects',
      [[{ objectId: '0x5', version: '1' }], { showContent: true }],
      null,
    ],
    ['sui_tryMultiGetPastObjects', [], 'takes 1 or 2 parameters'],
    ['sui_tryMultiGetPastObjects', ['x'], 'past_objects (parameter 1) must be an array'],
    ['sui_tryMultiGetPastObjects', [[]], 'must not be empty'],
    ['sui_tryMultiGetPastObjects', [[{ objectId: '0x5' }]], 'past_objects[0].version is required'],
    [
      'sui_tryMultiGetPastObjects',
      [[{ objectId: 'abc', version: '1' }]],
      'objectId must be a 0x-prefixed hex',
    ],
    [
      'sui_tryMultiGetPastObjects',
      [[{ objectId: '0x5', version: '-1' }]],
      'must be a u64 decimal string',
    ],
    [
      'sui_tryMultiGetPastObjects',
      [[{ objectId: '0x5', version: '18446744073709551616' }]],
      'must be a u64 decimal string',
    ],
    // QA PP: one rule for unknown members, the node's (serde ignores them): accepted, relayed.
    ['sui_tryMultiGetPastObjects', [[{ objectId: '0x5', version: '1', extra: 1 }]], null],
    ['sui_tryMultiGetPastObjects', [[{ objectId: '0x5', version: '1' }], { showFoo: true }], null],
    ['sui_tryMultiGetPastObjects', [[{ objectId: '0x5', version: '1' }], { showFoo: 'x' }], null],
    [
      'sui_tryMultiGetPastObjects',
      [[{ objectId: '0x5', version: '1' }], { showContent: 'yes' }],
      'options."showContent" must be a boolean',
    ],
  ])('%s %j', (method, params, problem) => {
    const error = checkSuiParams(method, params);
    if (problem === null) expect(error).toBeNull();
    else
      expect(error).toMatchObject({
        kind: 'invalid',
        message: expect.stringContaining(problem as string),
      });
  });

  it('never repeats more than a bounded piece of the input', () => {
    const error = checkSuiParams('sui_tryMultiGetPastObjects', [
      [{ objectId: '0x5', version: '9'.repeat(1_000_000) }],
    ]);
    expect(error!.message.length).toBeLessThan(200);
  });
});
