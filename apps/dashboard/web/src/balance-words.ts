import { formatCu, formatDateTime } from './format';

/** The balance's fields the notice reads (`Balance` in types.tsx). */
export interface ExhaustedBalance {
  overdraft_cu: number;
  allowance_resets_at: string | null;
}

/**
 * What an exhausted balance stops and what ends it, beside the Overview's "Exhausted" badge
 * (QA: the badge alone did not say). Node calls are refused and webhook deliveries stop (spec:
 * zero balance, rule 3); a top-up that clears ends it (one larger than an overdraft, which it
 * pays first), and so does the allowance's reset (renewal, or 07:30 UTC daily on Free).
 */
export function exhaustedNotice(balance: ExhaustedBalance, plan: string | null): string {
  return `Node calls and webhook deliveries are stopped ${untilWhat(balance, plan)}.`;
}

/** What ends an exhausted balance: "until a top-up … clears or your … resets on …". */
function untilWhat(balance: ExhaustedBalance, plan: string | null): string {
  const topUp =
    balance.overdraft_cu > 0
      ? `a top-up of more than ${formatCu(balance.overdraft_cu)} (the overdraft is paid first)`
      : 'a top-up';
  const reset = resetPhrase(balance, plan);
  return `until ${topUp} clears${reset ? ` or ${reset}` : ''}`;
}

/** "your daily allowance resets on …" (Free: 07:30 UTC daily), "your plan renews on …". */
function resetPhrase(balance: ExhaustedBalance, plan: string | null): string | null {
  const resetWord = plan === 'free' ? 'your daily allowance resets' : 'your plan renews';
  return balance.allowance_resets_at
    ? `${resetWord} on ${formatDateTime(balance.allowance_resets_at)}`
    : null;
}

/**
 * The notice on the pages whose products an exhausted balance stops (Webhooks, a webhook's
 * page, Node access; QA: only the Overview said it, the webhooks still read "Active"): webhooks
 * keep their status but deliver nothing, node calls are refused, and what ends it.
 */
export function exhaustedPageNotice(balance: ExhaustedBalance, plan: string | null): string {
  // Said once (QA: "… node calls are refused. Node calls and webhook deliveries are stopped …").
  return `Your CU balance is exhausted: webhooks keep their status but deliver nothing, and node calls are refused, ${untilWhat(balance, plan)}.`;
}

/**
 * A Resume refused at zero balance (409 insufficient_balance): what a resume needs, in the
 * notice's words from the same facts (spec rule 4: a top-up, or on Free the daily allowance's
 * reset at 07:30 UTC, which the API and the Overview name too; QA: only a top-up was named).
 */
export function resumeAtZeroMessage(balance: ExhaustedBalance | null, plan: string | null): string {
  const reset = balance ? resetPhrase(balance, plan) : null;
  return `Your CU balance is zero, so this webhook cannot resume: deliveries cost 25 CU each. Top up and resume it again; a top-up that is still clearing is enough once it is more than any overdraft.${reset ? ` Resume also works once ${reset}.` : ''}`;
}
