import { jsonRpcErrorOf } from '@meridian/jsonrpc';
import { gatewayHttpStatusOf } from '../relay/gateway-errors';
import {
  AccountBudget,
  accountCallsInFlightRefused,
  accountConnectionsRefused,
  accountUnreadReason,
} from './account-budget';

const limits = { connections: 2, callsInFlight: 5, unreadBytes: 100 };
const conn = (name: string) => ({ name });

describe('AccountBudget', () => {
  it('counts an account’s connections across its tokens: the one past the cap is refused, a slot comes back at close', () => {
    const budget = new AccountBudget(limits);
    expect(budget.openConnection('a')).toBe(true);
    expect(budget.openConnection('a')).toBe(true);
    expect(budget.openConnection('a')).toBe(false);
    // Another account is not touched by the first one's cap.
    expect(budget.openConnection('b')).toBe(true);
    budget.closeConnection('a');
    expect(budget.openConnection('a')).toBe(true);
    expect(budget.of('a').connections).toBe(2);
  });

  it('refuses calls past the account’s calls in flight, never queues them; a message alone always runs', () => {
    const budget = new AccountBudget(limits);
    expect(budget.takeCalls('a', 3)).toBe(true);
    expect(budget.takeCalls('a', 2)).toBe(true);
    expect(budget.takeCalls('a', 1)).toBe(false);
    expect(budget.takeCalls('b', 1)).toBe(true);
    budget.giveCalls('a', 2);
    expect(budget.takeCalls('a', 3)).toBe(false);
    expect(budget.takeCalls('a', 2)).toBe(true);
    budget.giveCalls('a', 3);
    budget.giveCalls('a', 2);
    // Nothing in flight: a batch larger than the cap still runs (as on one connection).
    expect(budget.takeCalls('a', 100)).toBe(true);
    expect(budget.takeCalls('a', 1)).toBe(false);
  });

  it('past the unread bytes, cuts the account’s connections holding the most until the rest fit', () => {
    const budget = new AccountBudget<{ name: string }>(limits);
    const [x, y, z] = [conn('x'), conn('y'), conn('z')];
    expect(budget.queued('a', x, 40)).toEqual([]);
    expect(budget.queued('a', y, 30)).toEqual([]);
    expect(budget.queued('a', z, 20)).toEqual([]);
    // Another account's unread answers do not count against this one.
    expect(budget.queued('b', conn('w'), 100)).toEqual([]);
    // 90 + 25 = 115 > 100: y (55) holds the most and goes, 60 stay.
    expect(budget.queued('a', y, 25)).toEqual([y]);
    expect(budget.of('a').unreadBytes).toBe(60);
    // Its answers written later change nothing: they left the count at the cut.
    budget.written('a', y, 55);
    expect(budget.of('a').unreadBytes).toBe(60);
    // 60 + 90 = 150: z (110) goes, then 40 fit.
    expect(budget.queued('a', z, 90)).toEqual([z]);
    expect(budget.of('a').unreadBytes).toBe(40);
    budget.written('a', x, 40);
    expect(budget.of('a').unreadBytes).toBe(0);
  });

  it('cuts as many as it takes, the one that queued included', () => {
    const budget = new AccountBudget<{ name: string }>(limits);
    const [x, y] = [conn('x'), conn('y')];
    budget.queued('a', x, 60);
    expect(budget.queued('a', y, 200)).toEqual([y]);
    expect(budget.of('a').unreadBytes).toBe(60);
    expect(budget.queued('a', x, 200)).toEqual([x]);
    expect(budget.of('a').unreadBytes).toBe(0);
  });

  it('written and forgotten bytes leave the count, and an idle account is not kept', () => {
    const budget = new AccountBudget<{ name: string }>(limits);
    const [x, y] = [conn('x'), conn('y')];
    budget.openConnection('a');
    budget.takeCalls('a', 2);
    budget.queued('a', x, 50);
    budget.queued('a', y, 30);
    budget.written('a', x, 20);
    expect(budget.of('a').unreadBytes).toBe(60);
    budget.forget('a', x);
    expect(budget.of('a').unreadBytes).toBe(30);
    budget.written('a', y, 30);
    budget.giveCalls('a', 2);
    budget.closeConnection('a');
    expect(budget.of('a')).toEqual({ connections: 0, calls: 0, unreadBytes: 0 });
    expect(budget.size).toBe(0);
    // Gives never go below zero, for an account it does not know either.
    budget.giveCalls('zz', 3);
    budget.closeConnection('zz');
    budget.written('zz', x, 3);
    expect(budget.size).toBe(0);
  });

  it('refuses in the gateway’s rate-limit form: -32005 (HTTP 429), with the cap and the account in the message', () => {
    for (const error of [accountCallsInFlightRefused(7), accountConnectionsRefused(7)]) {
      expect(gatewayHttpStatusOf(error)).toBe(429);
      const object = jsonRpcErrorOf(error);
      expect(object.code).toBe(-32005);
      expect(object.message).toMatch(/at most 7 .*per account .*on this gateway process/);
    }
    expect(Buffer.byteLength(accountUnreadReason(64 * 1024 * 1024))).toBeLessThanOrEqual(123);
  });
});
