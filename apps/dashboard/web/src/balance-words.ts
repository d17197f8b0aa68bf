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
  const topUp =
    balance.overdraft_cu > 0
      ? `a top-up of more than ${formatCu(balance.overdraft_cu)} (the overdraft is paid first)`
      : 'a top-up';
  const resetWord = plan === 'free' ? 'your daily allowance resets' : 'your plan renews';
  const reset = balance.allowance_resets_at
    ? ` or ${resetWord} on ${formatDateTime(balance.allowance_resets_at)}`
    : '';
  return `Node calls and webhook deliveries are stopped until ${topUp} clears${reset}.`;
}
