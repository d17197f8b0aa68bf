import type { DomainError } from '@meridian/errors';
import { refusal } from '../relay/gateway-errors';

/**
 * What one account may hold on one gateway process across all its access tokens and WebSocket
 * connections (ADR 0203 amendment "One account's budget per process"): open connections, calls
 * in flight, and bytes of answers queued that its clients have not read. The per-connection and
 * per-token caps (connection-limits.ts) bound one socket and one token; an account with many
 * rolled tokens multiplied them (QA: 30 tokens × 30 connections × 200 calls took a process to
 * 2.5 GB). Pure bookkeeping: the WebSocket edge asks and acts; no clock, no I/O.
 */
export interface AccountBudgetLimits {
  /** Open WebSocket connections per account in this process; past it the upgrade is 429. */
  connections: number;
  /** Calls (a batch counts its calls) in flight per account; past it -32005 at once. */
  callsInFlight: number;
  /**
   * Bytes of answers queued to the account's connections and not yet written to their sockets;
   * past it the connection holding the most is cut (1013), until the rest fit.
   */
  unreadBytes: number;
}

/** The defaults of WS_MAX_CONNECTIONS_PER_ACCOUNT, _CALLS_IN_FLIGHT_ and _UNREAD_BYTES_. */
export const DEFAULT_ACCOUNT_BUDGET: Readonly<AccountBudgetLimits> = {
  connections: 250,
  callsInFlight: 1_000,
  unreadBytes: 64 * 1024 * 1024,
};

interface Held {
  connections: number;
  calls: number;
  unread: number;
  /** Unread answer bytes by connection (only connections holding some). */
  byConnection: Map<object, number>;
}

export class AccountBudget<C extends object = object> {
  private readonly accounts = new Map<string, Held>();

  constructor(readonly limits: AccountBudgetLimits) {}

  /** Takes a connection slot for `account`, or false when it holds the cap already. */
  openConnection(account: string): boolean {
    const held = this.held(account);
    if (held.connections >= this.limits.connections) {
      this.dropIfIdle(account, held);
      return false;
    }
    held.connections++;
    return true;
  }

  /** Gives the slot back (the socket closed, however it ended). */
  closeConnection(account: string): void {
    const held = this.accounts.get(account);
    if (held === undefined) return;
    held.connections = Math.max(0, held.connections - 1);
    this.dropIfIdle(account, held);
  }

  /**
   * Takes `calls` slots of the account's calls in flight, or false (the message is refused at
   * once, never queued). A message when the account has nothing in flight always runs, whatever
   * its batch size, as on a connection.
   */
  takeCalls(account: string, calls: number): boolean {
    const held = this.held(account);
    if (held.calls > 0 && held.calls + calls > this.limits.callsInFlight) return false;
    held.calls += calls;
    return true;
  }

  giveCalls(account: string, calls: number): void {
    const held = this.accounts.get(account);
    if (held === undefined) return;
    held.calls = Math.max(0, held.calls - calls);
    this.dropIfIdle(account, held);
  }

  /**
   * Counts `bytes` of an answer queued to `connection` and not yet written. Returns the
   * connections to cut, most unread bytes first, so that what stays counted fits the budget
   * (none when it fits); their bytes leave the count now: a cut connection is closed and
   * terminated within WS_SLOW_CLIENT_CLOSE_MS, which bounds them in time.
   */
  queued(account: string, connection: C, bytes: number): C[] {
    const held = this.held(account);
    held.unread += bytes;
    held.byConnection.set(connection, (held.byConnection.get(connection) ?? 0) + bytes);
    const cut: C[] = [];
    while (held.unread > this.limits.unreadBytes && held.byConnection.size > 0) {
      let largest: C | undefined;
      let most = -1;
      for (const [c, n] of held.byConnection)
        if (n > most) {
          largest = c as C;
          most = n;
        }
      this.forget(account, largest!);
      cut.push(largest!);
    }
    return cut;
  }

  /** An answer queued to `connection` was written (or its socket is gone): `bytes` leave. */
  written(account: string, connection: C, bytes: number): void {
    const held = this.accounts.get(account);
    const mine = held?.byConnection.get(connection);
    if (held === undefined || mine === undefined) return;
    const left = Math.max(0, mine - bytes);
    held.unread -= mine - left;
    if (left === 0) held.byConnection.delete(connection);
    else held.byConnection.set(connection, left);
    this.dropIfIdle(account, held);
  }

  /** The connection was cut or closed: whatever it still holds leaves the account's count. */
  forget(account: string, connection: C): void {
    const held = this.accounts.get(account);
    const mine = held?.byConnection.get(connection);
    if (held === undefined || mine === undefined) return;
    held.unread -= mine;
    held.byConnection.delete(connection);
    this.dropIfIdle(account, held);
  }

  /** What `account` holds now (zeros when nothing). */
  of(account: string): { connections: number; calls: number; unreadBytes: number } {
    const held = this.accounts.get(account);
    return {
      connections: held?.connections ?? 0,
      calls: held?.calls ?? 0,
      unreadBytes: held?.unread ?? 0,
    };
  }

  /** Accounts holding anything (for tests: nothing is kept for an idle account). */
  get size(): number {
    return this.accounts.size;
  }

  private held(account: string): Held {
    let held = this.accounts.get(account);
    if (held === undefined) {
      held = { connections: 0, calls: 0, unread: 0, byConnection: new Map() };
      this.accounts.set(account, held);
    }
    return held;
  }

  private dropIfIdle(account: string, held: Held): void {
    if (held.connections === 0 && held.calls === 0 && held.byConnection.size === 0)
      this.accounts.delete(account);
  }
}

/** A message that would take the account past its calls in flight on this process. */
export function accountCallsInFlightRefused(cap: number): DomainError {
  return refusal(
    'ws_account_calls_in_flight',
    'rate_limited',
    `at most ${cap} calls in flight per account over WebSocket on this gateway process; wait for answers before sending more`,
    { details: { retryAfterMs: 1_000 } },
  );
}

/** An upgrade past the account's open connections on this process: HTTP 429 before it. */
export function accountConnectionsRefused(cap: number): DomainError {
  return refusal(
    'ws_account_connections',
    'rate_limited',
    `at most ${cap} open WebSocket connections per account on this gateway process`,
    { details: { retryAfterMs: 1_000 } },
  );
}

/** The close reason of a connection cut for its account's unread answers (≤ 123 bytes). */
export function accountUnreadReason(unreadBytes: number): string {
  return `slow consumer: account over ${unreadBytes} bytes of answers unread`;
}
