import type { DomainError } from '@meridian/errors';
import { refusal } from '../relay/gateway-errors';

/**
 * The bounds on what one WebSocket connection and one access token may hold in a gateway process
 * (ADR 0203 amendment "Bounded work per connection"): calls in flight per connection, connections
 * per token. Both refusals are the gateway's rate-limit refusal (-32005, HTTP 429).
 */

/** A message that would take a connection past its calls in flight: answered at once, not queued. */
export function callsInFlightRefused(cap: number): DomainError {
  return refusal(
    'ws_calls_in_flight',
    'rate_limited',
    `at most ${cap} calls in flight per WebSocket connection; wait for answers before sending more`,
    { details: { retryAfterMs: 1_000 } },
  );
}

/** An upgrade past the token's open connections in this process: HTTP 429 before the upgrade. */
export function connectionsRefused(cap: number): DomainError {
  return refusal(
    'ws_connections',
    'rate_limited',
    `at most ${cap} open WebSocket connections per access token on this gateway process`,
    { details: { retryAfterMs: 1_000 } },
  );
}

/** The gateway is stopping: no new connection (HTTP 503 before the upgrade). */
export const SHUTTING_DOWN: DomainError = refusal(
  'shutting_down',
  'unavailable',
  'the gateway is shutting down; reconnect',
);

/**
 * The slots a message takes in its connection's calls in flight: the elements of a top-level
 * array (a batch), else 1. A scan, not a parse (the relay parses the message once, later): strings
 * are skipped with their escapes, and malformed text counts what it seems to hold, at least 1 (the
 * relay answers it with its parse error, and the message holds the connection until then).
 * Not the request log's `calls` (`callsAsParsed`, @meridian/jsonrpc), which counts what the
 * parsed request held (0 for text that is not JSON or an empty batch): the cap must be decided
 * before the relay parses, and an answer owed always takes a slot.
 */
export function callSlotsOf(text: string): number {
  let i = 0;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 0x5b /* [ */) return 1;
  let depth = 0;
  let calls = 0;
  let empty = true;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i++;
        else if (s === 0x22) break;
      }
      if (depth === 1) empty = false;
    } else if (c === 0x5b || c === 0x7b /* [ { */) {
      if (depth === 1) empty = false;
      depth++;
    } else if (c === 0x5d || c === 0x7d /* ] } */) {
      depth--;
      if (depth === 0) break;
    } else if (depth === 1) {
      if (c === 0x2c /* , */) calls++;
      else if (!isSpace(c)) empty = false;
    }
  }
  return Math.max(1, empty ? 0 : calls + 1);
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Open connections per access token (its sha256) in this process. */
export class TokenConnections {
  private readonly open = new Map<string, number>();

  constructor(private readonly cap: number) {}

  /** Takes a slot for `hash`, or false when its connections are at the cap. */
  take(hash: string): boolean {
    const held = this.open.get(hash) ?? 0;
    if (held >= this.cap) return false;
    this.open.set(hash, held + 1);
    return true;
  }

  give(hash: string): void {
    const held = this.open.get(hash) ?? 0;
    if (held <= 1) this.open.delete(hash);
    else this.open.set(hash, held - 1);
  }

  of(hash: string): number {
    return this.open.get(hash) ?? 0;
  }
}
