/**
 * The operator's plan picker for one account: what it shows and whether Apply does anything.
 * `''` stands for "no plan", which only a team account may have. Enterprise comes with a
 * contract (its caps and allowance) that this page cannot express, so an enterprise account is
 * shown read-only and enterprise is never offered: a plain `{plan}` would drop the contract.
 */
export interface PlanPicker {
  editable: boolean;
  options: Array<{ value: string; label: string }>;
  value: string;
  canApply: boolean;
}

export const NO_PLAN = '';

export function planPicker(
  account: { type: string; plan: string | null },
  chosen: string | undefined,
  names: Record<string, string>,
): PlanPicker {
  const current = account.plan ?? NO_PLAN;
  const options = [
    ...(account.type === 'team' ? [{ value: NO_PLAN, label: 'No plan' }] : []),
    ...Object.entries(names)
      .filter(([key]) => key !== 'enterprise')
      .map(([value, label]) => ({ value, label })),
  ];
  if (account.plan === 'enterprise')
    return { editable: false, options: [], value: current, canApply: false };
  const value = chosen ?? current;
  return { editable: true, options, value, canApply: value !== current };
}

/** What the BFF's plan route takes for a picker value. */
export const planOfValue = (value: string): string | null => (value === NO_PLAN ? null : value);
