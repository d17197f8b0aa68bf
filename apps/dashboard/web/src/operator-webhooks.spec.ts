import { pausedReasonWords, triggerWords } from './operator-webhooks';

describe("the operator's webhook list in words", () => {
  it.each([
    ['owner_paused', /^Paused by the customer/],
    ['auto_paused', /^Paused by the service: its deliveries kept failing/],
    ['plan_paused', /over its plan's webhook limits/],
    ['no_balance', /ran out of CU/],
  ])('says why a webhook is paused (%s)', (reason, words) => {
    expect(pausedReasonWords(reason)).toMatch(words);
  });

  it('says nothing for an active webhook or a reason it does not know', () => {
    expect(pausedReasonWords(null)).toBeNull();
    expect(pausedReasonWords('deleted')).toBeNull();
    expect(pausedReasonWords('toString')).toBeNull();
  });

  it('names trigger types in words', () => {
    expect(triggerWords('address_activity')).toBe('address activity');
    expect(triggerWords('tx_confirmation')).toBe('tx confirmation');
  });
});
