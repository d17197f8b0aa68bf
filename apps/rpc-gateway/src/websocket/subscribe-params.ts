import type { DomainError } from '@meridian/errors';
import { invalidParams } from '../relay/gateway-errors';
import { checkLogFilter } from '../relay/log-filter';

/**
 * The params of eth_subscribe and eth_unsubscribe, checked before anything is shared or asked:
 * identical eth_subscribe calls share one upstream subscription (ADR 0203), so a malformed one
 * refused here is refused alike for every caller, at once and unbilled, instead of each waiting
 * on the node's answer to the first. A logs filter's shape is the rule of every log filter
 * (log-filter.ts). What the node checks beyond this (which blocks a subscription may name,
 * fields we do not know) is its own answer, which every waiter then gets (subscription-hub.ts).
 */

export const SUBSCRIPTION_TYPES: ReadonlySet<string> = new Set([
  'newHeads',
  'logs',
  'newPendingTransactions',
]);

const BAD_SUBSCRIPTION_TYPE = invalidParams(
  'subscription type must be one of newHeads, logs, newPendingTransactions',
);
const BAD_LOGS_FILTER = invalidParams(
  'logs subscription takes a filter object {address?, topics?}',
);
const BAD_UNSUBSCRIBE = invalidParams('eth_unsubscribe takes one subscription id (a string)');

/**
 * Deepest nesting of arrays and objects eth_subscribe params may have: `["logs", {"topics":
 * [[topic]]}]` is 4 deep. Deeper params are no filter a node takes, and JSON.stringify of a
 * 200,000-deep list (the shared entry's key) overflows the stack (QA: -32000 for it).
 */
const MAX_PARAMS_DEPTH = 8;
const TOO_DEEP = invalidParams(`eth_subscribe params nest deeper than ${MAX_PARAMS_DEPTH} levels`);

/**
 * Null when the eth_subscribe params may be shared and sent; otherwise why not (-32602).
 * `paramsRaw` is the params' JSON text as the client sent it.
 */
export function checkSubscribeParams(
  params: readonly unknown[],
  paramsRaw: string,
): DomainError | null {
  if (nestsDeeper(paramsRaw, MAX_PARAMS_DEPTH)) return TOO_DEEP;
  const type = params[0];
  if (typeof type !== 'string' || !SUBSCRIPTION_TYPES.has(type)) return BAD_SUBSCRIPTION_TYPE;
  if (type !== 'logs' || params[1] === undefined) return null;
  // The rule of eth_getLogs and eth_newFilter filters too: one rule (log-filter.ts).
  return checkLogFilter(params[1], BAD_LOGS_FILTER);
}

/** Null for `[<subscription id>]`; eth_unsubscribe with other params is invalid (-32602). */
export function checkUnsubscribeParams(params: readonly unknown[]): DomainError | null {
  return params.length === 1 && typeof params[0] === 'string' ? null : BAD_UNSUBSCRIBE;
}

/** Whether JSON text nests arrays and objects deeper than `max` (strings skipped). */
function nestsDeeper(json: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
