const loggedOnce = new WeakSet<object>();

/**
 * Marks an error whose cause the app logs once per outage (a DependencyOutageLog of
 * libs/platform/grpc: billing-ledger out of reach), so DomainErrorFilter answers it as usual but
 * writes a debug line for it, not an error line per request.
 */
export function causeLoggedOnce<E extends object>(error: E): E {
  loggedOnce.add(error);
  return error;
}

export function isCauseLoggedOnce(error: unknown): boolean {
  return typeof error === 'object' && error !== null && loggedOnce.has(error);
}
