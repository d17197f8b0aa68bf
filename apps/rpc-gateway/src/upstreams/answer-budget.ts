/**
 * The bytes of node answers one client request may still receive (MAX_RESPONSE_BYTES, ADR
 * 0215): an HTTP or WebSocket request (a batch counts all its calls) or one gRPC method. A
 * node's body is read only up to what the request has left (`left`): the read stops there and
 * that call is answered -32005 "answer too large", unbilled, not a failure of the node. Each
 * answer kept is charged (`keep`); one that does not fit in what is left is dropped for the
 * same -32005, so a request's answers together stay within the limit (plus the JSON-RPC
 * envelope of each call).
 */
export class AnswerBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  /** Bytes the request may still receive. */
  get left(): number {
    return Math.max(0, this.limit - this.used);
  }

  /** Charges an answer of `bytes`: false (nothing charged) when it does not fit in `left`. */
  keep(bytes: number): boolean {
    if (bytes > this.limit - this.used) return false;
    this.used += bytes;
    return true;
  }
}
