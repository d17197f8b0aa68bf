/**
 * One Idempotency-Key per submission of a form: the key is made on the first press and kept
 * while the request is in flight, after a failure (a retry of the same values is the same
 * request, so a top-up the server made before the answer was lost is answered, not made again)
 * and until the form's values change or the request succeeds. A press while one is in flight
 * sends nothing (a double click, Enter pressed twice).
 */
export class SubmissionKeys {
  private current: { values: string; key: string } | undefined;
  private inFlight = false;

  constructor(private readonly newKey: () => string = randomKey) {}

  /** The key for a submission of `values` (serialised), or undefined while one is in flight. */
  begin(values: string): string | undefined {
    if (this.inFlight) return undefined;
    this.inFlight = true;
    if (this.current?.values !== values) this.current = { values, key: this.newKey() };
    return this.current.key;
  }

  /** The request answered: a success ends the key (the next submission is a new one). */
  settled(succeeded: boolean): void {
    this.inFlight = false;
    if (succeeded) this.current = undefined;
  }
}

/**
 * A random UUID; `crypto.randomUUID` exists only in secure contexts (https, localhost), so a
 * dashboard served over plain http on another host gets one from `getRandomValues` (RFC 9562
 * version 4 layout).
 */
export function randomKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
