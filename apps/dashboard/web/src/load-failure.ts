/**
 * What a failed load offers (QA: the operator's page of an unknown account said "Could not load
 * this. account not found" with a Try again that could not help). A refusal (4xx) says the same
 * however often it is asked, so only a failure that may pass offers Try again: a 5xx, no answer
 * (status 0: network, timeout) or an error that is not an answer at all.
 */
export function retryableLoad(failure: { status?: number } | unknown): boolean {
  const status =
    typeof failure === 'object' && failure !== null && 'status' in failure
      ? (failure as { status: unknown }).status
      : undefined;
  if (typeof status !== 'number') return true;
  return status === 0 || status >= 500;
}

/** The operator's account page that failed to load: "No account <id>" for billing's 404. */
export function operatorAccountFailure(
  failure: { status?: number } | unknown,
  id: string,
): { kind: 'missing'; title: string } | { kind: 'failed'; retry: boolean } {
  const status =
    typeof failure === 'object' && failure !== null && 'status' in failure
      ? (failure as { status: unknown }).status
      : undefined;
  if (status === 404) return { kind: 'missing', title: `No account ${id}` };
  return { kind: 'failed', retry: retryableLoad(failure) };
}
