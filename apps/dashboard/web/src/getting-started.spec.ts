import { startSteps } from './getting-started';

describe('startSteps', () => {
  it('points a new account to its first token and first webhook', () => {
    expect(startSteps({ tokens: 0, webhooks: 0 })?.map((s) => [s.to, s.done])).toEqual([
      ['/node-access', false],
      ['/webhooks/new', false],
    ]);
    expect(startSteps({ tokens: 1, webhooks: 0 })?.map((s) => s.done)).toEqual([true, false]);
  });

  it('is gone once both are done', () => {
    expect(startSteps({ tokens: 2, webhooks: 1 })).toBeUndefined();
  });
});
