import {
  createInbox,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription,
} from '@nats-io/transport-node';

/**
 * The connection's `inboxPrefix` (NatsClient sets one per app, ADR 0507), which nats.js keeps
 * in its options but not in the NatsConnection type; its own requests and consumers read it
 * there too. A PubAck must come to an inbox the app's NATS user may subscribe to.
 */
function inboxPrefixOf(nc: NatsConnection): string | undefined {
  return (nc as NatsConnection & { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
}

/** One message for a stream: what `js.publish` would send, without its per-message request. */
export interface StreamMessage {
  subject: string;
  data: string | Uint8Array;
  headers?: MsgHdrs;
}

interface Waiting {
  settle: (error?: Error) => void;
  batch: Batch;
}

interface Batch {
  open: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Publishes many messages to JetStream at once and learns each one's fate from its PubAck.
 *
 * `js.publish` (and `kv.put`, which is one) makes a NATS request per message: its own timer,
 * promise chain, inbox token and an Error the client builds to cancel it even on success. At a
 * fleet's shape (10,000 balance states a second in billing-ledger, an outcome per delivery
 * attempt in delivery-worker) that was a fifth of a process's CPU (ADR 0104). Here every message
 * is a plain publish with a reply subject on one wildcard inbox subscription, and one timer
 * covers a batch.
 *
 * A message is acked when the stream answers with a sequence (a duplicate `Nats-Msg-Id` counts:
 * the stream holds it already). It fails when the stream refuses it (`{"error":…}`), when nothing
 * takes the subject (NATS answers 503 with no body), when it could not be written (connection
 * closing), when no PubAck came within the batch's timeout, or when the publisher is closed.
 */
export class PubAckBatch {
  private connection: NatsConnection | undefined;
  private subscription: Subscription | undefined;
  private inbox = '';
  private seq = 0;
  private readonly waiting = new Map<string, Waiting>();

  /** Messages still waiting for their PubAck. */
  get inFlight(): number {
    return this.waiting.size;
  }

  /**
   * Publishes `messages`; `settle(i, error?)` is called exactly once for each: without an error
   * once the stream acked message `i`.
   */
  publish(
    nc: NatsConnection,
    messages: readonly StreamMessage[],
    timeoutMs: number,
    settle: (index: number, error?: Error) => void,
  ): void {
    if (messages.length === 0) return;
    this.attach(nc);
    const batch: Batch = { open: 0, timer: undefined };
    const tokens: string[] = [];
    messages.forEach((message, index) => {
      const token = String((this.seq += 1));
      this.waiting.set(token, { settle: (error) => settle(index, error), batch });
      batch.open += 1;
      tokens.push(token);
      try {
        nc.publish(message.subject, message.data, {
          reply: `${this.inbox}.${token}`,
          ...(message.headers ? { headers: message.headers } : {}),
        });
      } catch (error) {
        // Not written (connection closing): this one fails now, the batch's others wait.
        this.settle(token, asError(error));
      }
    });
    if (batch.open > 0)
      batch.timer = setTimeout(() => {
        for (const token of tokens)
          this.settle(token, new Error(`no PubAck within ${timeoutMs} ms`));
      }, timeoutMs);
  }

  /** Resolves when every message is acked; rejects on the first failure. */
  publishAll(
    nc: NatsConnection,
    messages: readonly StreamMessage[],
    timeoutMs: number,
  ): Promise<void> {
    if (messages.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      let open = messages.length;
      this.publish(nc, messages, timeoutMs, (_index, error) => {
        if (error) return reject(error);
        open -= 1;
        if (open === 0) resolve();
      });
    });
  }

  /** Fails every message still waiting and drops the subscription. */
  close(): void {
    const subscription = this.subscription;
    this.subscription = undefined;
    this.connection = undefined;
    subscription?.unsubscribe();
    for (const token of [...this.waiting.keys()]) this.settle(token, new Error('publisher closed'));
  }

  private attach(nc: NatsConnection): void {
    if (this.subscription && this.connection === nc && !this.subscription.isClosed()) return;
    this.connection = nc;
    this.inbox = createInbox(inboxPrefixOf(nc));
    this.subscription = nc.subscribe(`${this.inbox}.*`, {
      // An error closes the subscription: the open batches fail on their timers.
      callback: (error, msg) => {
        if (!error) this.onPubAck(msg);
      },
    });
  }

  private onPubAck(msg: Msg): void {
    const token = msg.subject.slice(this.inbox.length + 1);
    if (!this.waiting.has(token)) return; // timed out already
    if (msg.data.length === 0)
      return this.settle(
        token,
        new Error(`no stream answered (${msg.headers?.code ?? 'empty reply'})`),
      );
    let ack: { seq?: unknown; error?: { description?: string } };
    try {
      ack = msg.json();
    } catch (error) {
      return this.settle(token, asError(error));
    }
    if (ack.error || typeof ack.seq !== 'number')
      return this.settle(
        token,
        new Error(`refused: ${ack.error?.description ?? 'invalid PubAck'}`),
      );
    this.settle(token);
  }

  private settle(token: string, error?: Error): void {
    const waiting = this.waiting.get(token);
    if (!waiting) return;
    this.waiting.delete(token);
    waiting.batch.open -= 1;
    if (waiting.batch.open === 0) clearTimeout(waiting.batch.timer);
    waiting.settle(error);
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
