import { AccountStates, type AccountSnapshot } from './credential-cache';
import { SpendEstimate, UsageWindow } from './spend-estimate';

describe('SpendEstimate', () => {
  it('admits calls while above zero; the last one may take it below (one call of overdraft)', () => {
    const estimate = new SpendEstimate();
    estimate.reset(1, 250);
    expect([1, 2, 3, 4].map(() => estimate.take(100))).toEqual([true, true, true, false]);
    expect(estimate.remainingCu).toBe(-50);
    expect(estimate.spent).toBe(true);
  });

  it('refuses nothing before it knows the pools (static tokens)', () => {
    const estimate = new SpendEstimate();
    expect(estimate.take(1e12)).toBe(true);
    estimate.reset(0, undefined);
    expect(estimate.take(1e12)).toBe(true);
    expect(estimate.spent).toBe(false);
  });

  it('gives back an unbilled call, also after a newer state (which counted it in flight)', () => {
    const estimate = new SpendEstimate();
    estimate.reset(1, 100);
    estimate.take(100);
    estimate.giveBack(100);
    expect(estimate.remainingCu).toBe(100);
    estimate.take(100);
    estimate.reset(2, 40);
    expect(estimate.remainingCu).toBe(-60);
    estimate.giveBack(100);
    expect(estimate.remainingCu).toBe(40);
  });
});

describe('SpendEstimate.reset: what no state can hold yet is not given back', () => {
  it('subtracts the calls in flight and those metered into the window not flushed yet', () => {
    const window = new UsageWindow();
    const estimate = new SpendEstimate(window);
    estimate.reset(1, 1_000);
    for (let i = 0; i < 5; i++) estimate.take(100);
    estimate.metered(100);
    estimate.metered(100);
    // A state that holds none of it (the ledger applied an older flush): 3 in flight, 2 metered.
    estimate.reset(2, 1_000);
    expect(estimate.remainingCu).toBe(500);
    // The window is cut (drained into a flush): those two may be in the next state, and are
    // left to it; the three still in flight are not.
    window.cut();
    estimate.reset(3, 800);
    expect(estimate.remainingCu).toBe(500);
    // Answered after the cut: metered into the new window, still unpublished.
    estimate.metered(100);
    estimate.giveBack(100);
    estimate.reset(4, 800);
    expect(estimate.remainingCu).toBe(600);
    estimate.metered(100);
    window.cut();
    estimate.reset(5, 500);
    expect(estimate.remainingCu).toBe(500);
  });
});

describe('AccountStates: the estimate follows the balance states', () => {
  const state = (version: number, spendableCu?: number): AccountSnapshot => ({
    accountId: 'a',
    status: 'ok',
    nodeRps: 800,
    spendableCu,
    version,
  });

  it('a newer version resets it; the same version seen again (feed and resolution) does not', () => {
    const window = new UsageWindow();
    const states = new AccountStates(window);
    expect(states.estimate('a')).toBeUndefined();
    states.apply(state(5, 20_000));
    const estimate = states.estimate('a')!;
    for (let i = 0; i < 200; i++) estimate.take(100);
    for (let i = 0; i < 200; i++) estimate.metered(100);
    expect(estimate.spent).toBe(true);
    states.apply(state(5, 20_000));
    expect(estimate.spent).toBe(true);
    // An older state changes nothing.
    states.apply(state(4, 30_000));
    expect(estimate.spent).toBe(true);
    // The usage is flushed; a top-up (or the ledger's apply) publishes a newer version.
    window.cut();
    states.apply(state(6, 1_000));
    expect(states.estimate('a')).toBe(estimate);
    expect(estimate.remainingCu).toBe(1_000);
    expect(estimate.version).toBe(6);
  });
});
