/** The fields of a listed top-up (`TopUp` in types.tsx) that say who bought it. */
export interface TopUpBuyer {
  source: string;
  api_key_id?: string | null;
  created_by?: string | null;
  created_by_email?: string | null;
}

/**
 * The Top up page's "Bought by" (ADR 0604 amendment "Who bought a top-up"): the member's email,
 * "removed member" for one since removed (the dashboard forgets a removed person, as for the
 * keys they made), "operator" for an operator's credit, "API" for a key of no person, "—" for a
 * top-up from before billing recorded who bought it.
 */
export function boughtBy(topUp: TopUpBuyer): string {
  if (topUp.source === 'operator') return 'operator';
  if (topUp.created_by) return topUp.created_by_email ?? 'removed member';
  return topUp.api_key_id ? 'API' : '—';
}
