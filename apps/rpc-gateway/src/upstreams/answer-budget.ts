/** An answer read or kept up to this many bytes never counts against `AnswersInFlight`. */
export const EXEMPT_ANSWER_BYTES = 1024 * 1024;

/**
 * The bytes of node answers one client request may still receive (MAX_RESPONSE_BYTES, ADR
 * 0215): an HTTP or WebSocket request (a batch counts all its calls) or one gRPC method. A
 * node's body is read only up to what the request has left (`left`): the read stops there and
 * that call is answered -32005 "answer too large", unbilled, not a failure of the node. Each
 * answer kept is charged (`keep`); one that does not fit in what is left is dropped for the
 * same -32005, so a request's answers together stay within the limit (plus the JSON-RPC
 * envelope of each call).
 *
 * With `inFlight` (the worker's MAX_ANSWER_BYTES_IN_FLIGHT, ADR 0215 amendment), what the
 * request keeps past its first EXEMPT_ANSWER_BYTES is held in the worker's budget until
 * `release` (the request's answer is built and handed to its transport).
 */
export class AnswerBudget {
  private used = 0;
  private held = 0;

  constructor(
    readonly limit: number,
    private readonly inFlight?: AnswersInFlight,
  ) {}

  /** Bytes the request may still receive. */
  get left(): number {
    return Math.max(0, this.limit - this.used);
  }

  /** A hold for one node body read for this request (none without a worker budget). */
  read(): AnswerRead | undefined {
    return this.inFlight?.read();
  }

  /**
   * Charges an answer of `bytes`: false (nothing charged) when it does not fit in `left`. An
   * answer kept was read within the worker's budget already: it is held, not checked again.
   */
  keep(bytes: number): boolean {
    if (bytes > this.limit - this.used) return false;
    this.used += bytes;
    if (this.inFlight !== undefined && this.used > EXEMPT_ANSWER_BYTES) {
      const hold = this.used - this.held;
      this.inFlight.add(hold);
      this.held += hold;
    }
    return true;
  }

  /** The request is done (answered, failed, or its client gone): its answers leave the budget. */
  release(): void {
    if (this.held === 0) return;
    this.inFlight?.add(-this.held);
    this.held = 0;
  }
}

/**
 * The worker's budget of node answer bytes in flight (MAX_ANSWER_BYTES_IN_FLIGHT, ADR 0215
 * amendment): bodies being read (`AnswerRead`, counted chunk by chunk where MAX_RESPONSE_BYTES
 * is counted, in `HttpTransport.post`) and answers kept until their request is done
 * (`AnswerBudget.keep` / `release`). Only big answers compete: a body is not counted until it
 * passes EXEMPT_ANSWER_BYTES, and a request's kept answers neither. A read that would take the
 * total past `limit` is refused (the call: -32005 "server busy", unbilled).
 */
export class AnswersInFlight {
  private total = 0;

  constructor(readonly limit: number) {}

  /** Bytes of answers counted now. */
  get bytes(): number {
    return this.total;
  }

  /** A hold for one node body about to be read; `release` it when the read is over. */
  read(): AnswerRead {
    return new AnswerRead(this);
  }

  /** @internal Moves the total (a hold taken or given back). */
  add(bytes: number): void {
    this.total += bytes;
  }
}

/** One node body being read against the worker's budget (`AnswersInFlight.read`). */
export class AnswerRead {
  private received = 0;
  private held = 0;

  constructor(private readonly owner: AnswersInFlight) {}

  /**
   * `bytes` more of the body arrived: false (nothing more held) when the body is past
   * EXEMPT_ANSWER_BYTES and holding it would pass the worker's budget; the read must stop.
   */
  grow(bytes: number): boolean {
    this.received += bytes;
    if (this.received <= EXEMPT_ANSWER_BYTES) return true;
    const more = this.received - this.held;
    if (this.owner.bytes + more > this.owner.limit) return false;
    this.owner.add(more);
    this.held += more;
    return true;
  }

  /** The read is over (answered, stopped, failed): what it held is given back. Idempotent. */
  release(): void {
    if (this.held === 0) return;
    this.owner.add(-this.held);
    this.held = 0;
  }
}
