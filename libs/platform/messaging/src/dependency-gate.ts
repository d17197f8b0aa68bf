/**
 * Something the handlers of a consumer need besides the message (the app's Postgres: platform-db's
 * `DbJobGate` is one), which can be out of reach for a while. A failure that means it is out of
 * reach is not the message's fault and must not spend the message's delivery attempts
 * (`maxDeliver` is for poison messages): the runner holds the message until the dependency
 * answers again, then runs its handler again.
 */
export interface DependencyGate {
  /**
   * Whether `error` means the dependency is out of reach now (then it stays closed until it
   * answers again, which the gate finds out by itself, e.g. a probe with backoff). False for
   * any failure of the message's own.
   */
  outage(error: unknown): Promise<boolean>;
  /** Resolves once the dependency answers again (at once if it does). */
  whenOpen(): Promise<void>;
}
