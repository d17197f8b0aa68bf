import {
  deadLetterId,
  eventForSubject,
  type ConsumerDeclaration,
  type DeadLetter,
  type EventContract,
  type PayloadOf,
} from '@meridian/contracts';
import type { ConsumerMessages, ConsumerNotification, JsMsg } from '@nats-io/jetstream';
import type { DependencyGate } from './dependency-gate';
import type { JetStreamPublisher } from './jetstream-publisher';
import type { NatsClient, NatsClientLogger } from './nats-client';
import type { NatsNamespace } from './nats-namespace';
import { outcomeOfError, type HandlerOutcome } from './handler-outcome';

/** A validated message handed to a consumer handler. */
export interface ConsumedMessage<P = unknown> {
  /** The event type the subject belongs to (a consumer may receive several, e.g. blocks and removals). */
  readonly event: EventContract;
  /** Payload, already validated by `event.schema`. */
  readonly payload: P;
  /** Unprefixed subject. */
  readonly subject: string;
  /** 1 on first delivery. */
  readonly deliveryCount: number;
  readonly streamSequence: number;
  readonly msgId: string | undefined;
  /**
   * The message body as received (the bytes `payload` was decoded from): a handler that waits
   * long for something may keep these instead of `payload`, whose objects would outlive the
   * young generation.
   */
  readonly data: Uint8Array;
  /** Extends the ack deadline for a handler that legitimately runs long. */
  working(): void;
}

/**
 * What a handler returns to have its message delivered again after `delayMs` because it has to
 * wait (a scheduled retry, a busy endpoint), which is not a failure: the runner naks it with
 * that delay, logs it at debug and counts it by `reason` (`messaging_redeliveries_total`),
 * never a 'handler failed' warning. A handler that throws has failed (`outcomeOfError`).
 */
export interface Redeliver {
  readonly redeliverAfterMs: number;
  /** A short, bounded word (a metric label): `not_due`, `endpoint_busy`. */
  readonly reason: string;
}

/** `return redeliverAfter(ms, 'not_due')` from a handler: see `Redeliver`. */
export function redeliverAfter(delayMs: number, reason: string): Redeliver {
  return { redeliverAfterMs: Math.max(0, delayMs), reason };
}

function isRedeliver(value: unknown): value is Redeliver {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Redeliver).redeliverAfterMs === 'number'
  );
}

/** Resolves when the message is handled (acked), or with `Redeliver` to have it back later. */
export type ConsumerHandler = (message: ConsumedMessage) => Promise<void | Redeliver>;

/** Narrows a message to one event type: `if (isEvent(m, Events.chainBlock)) m.payload.hash`. */
export function isEvent<C extends EventContract>(
  message: ConsumedMessage,
  contract: C,
): message is ConsumedMessage<PayloadOf<C>> {
  return message.event.type === contract.type;
}

export interface ConsumerRunnerDeps {
  client: NatsClient;
  namespace: NatsNamespace;
  publisher: JetStreamPublisher;
  logger?: NatsClientLogger & {
    error(obj: object, msg?: string): void;
    debug?(obj: object, msg?: string): void;
  };
  /** Wait before re-attaching after the consumer was missing or the stream ended. */
  retryDelayMs?: number;
  now?: () => Date;
  /** Counts every message parked on a dead-letter subject (`/metrics`). */
  deadLettered?: { inc(labels: { consumer: string; reason: string; code: string }): void };
  /** Counts every message a handler asked to have again later (`Redeliver`), by its reason. */
  redelivered?: { inc(labels: { consumer: string; reason: string }): void };
  /**
   * What the handlers depend on (the app's Postgres, `DbJobGate`): a failure one of them calls
   * an outage holds the message, not counted against `maxDeliver` (see `ConsumerRunner`).
   */
  gates?: readonly DependencyGate[];
  /** Replaces every consumer's `backoffMs` (tests: a declaration's minutes in milliseconds). */
  backoffMs?: readonly number[];
}

type Settled = HandlerOutcome & { deadLettered?: boolean };

/** One decoder for every message (TextDecoder is stateless for whole-buffer decodes). */
const decoder = new TextDecoder();
const ACK: HandlerOutcome = Object.freeze({ action: 'ack' });
/** Distinct subject prefixes remembered per runner (a `>` filter could otherwise grow it). */
const EVENT_CACHE_LIMIT = 256;
/**
 * Outages one delivery may wait out before its failures count as its own: a message whose
 * handler fails the same way each time the dependency has just answered again (it breaks the
 * connection itself) reaches `maxDeliver` like any other poison message.
 */
export const MAX_HOLDS_PER_DELIVERY = 3;

/**
 * Why a status of a running `consume()` means it no longer reaches its consumer, if it does: the
 * iterator itself keeps running (it waits for the consumer to come back) and says so only
 * there. Missed heartbeats: the server stopped answering the pull (lost its store, or the
 * consumer moved); the client pauses that count while it is disconnected.
 */
export function detachCause(status: ConsumerNotification): string | undefined {
  switch (status.type) {
    case 'consumer_deleted':
      return `consumer deleted (${status.code} ${status.description})`;
    case 'consumer_not_found':
      return 'consumer not found';
    case 'stream_not_found':
      return `stream not found (${status.name})`;
    case 'heartbeats_missed':
      return `${status.count} heartbeats missed`;
    default:
      return undefined;
  }
}

/**
 * The message handed to the handler. A class, not a literal with a `working` closure: one
 * object per message, and the `Nats-Msg-Id` header is only parsed if someone reads it.
 */
class Delivery implements ConsumedMessage {
  constructor(
    readonly event: EventContract,
    readonly payload: unknown,
    readonly subject: string,
    readonly deliveryCount: number,
    readonly streamSequence: number,
    private readonly msg: JsMsg,
  ) {}

  get msgId(): string | undefined {
    return this.msg.headers?.get('Nats-Msg-Id') || undefined;
  }

  get data(): Uint8Array {
    return this.msg.data;
  }

  working(): void {
    this.msg.working();
  }
}

/**
 * Runs one durable pull consumer: pulls up to `concurrency` messages, validates each against
 * the event schema of its subject, calls the handler, and settles the message (ack / nak(delay)
 * / term + dead letter; see `outcomeOfError`). `start()` returns at once and keeps trying while
 * NATS is down or the consumer is not provisioned yet (`ready` says whether it is consuming).
 * `stop()` stops pulling and waits for in-flight handlers to settle.
 *
 * A dependency out of reach (a handler failed and one of `deps.gates` calls it an outage: the
 * app's Postgres stopped) pauses the consumer instead of spending delivery attempts: it stops
 * pulling, holds the failed message and those already pulled (in memory, their ack deadline
 * extended), and once the gate says the dependency answers again runs them again and pulls
 * on. The gate logs the outage once; nothing is logged per message. A message's delivery count
 * does not grow while it is held, so `maxDeliver` only catches poison messages.
 */
export class ConsumerRunner {
  private messages: ConsumerMessages | undefined;
  /** Handlers running or settling. */
  private inFlight = 0;
  /** The pull loop, waiting for a free slot (only while `inFlight` is at `concurrency`). */
  private slotFree: (() => void) | undefined;
  private readonly idle: (() => void)[] = [];
  private readonly events = new Map<string, EventContract | undefined>();
  private readonly fireAndForget: boolean;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private lastError: string | undefined;
  /** Fire-and-forget acks of this turn of the event loop, written together (one socket write). */
  private acks: JsMsg[] = [];
  private acksScheduled = false;
  /** The dependency out of reach: nothing is pulled until it answers. */
  private pausedOn: DependencyGate | undefined;
  /** Pulled before the pause and not started: started first when it ends, in order. */
  private parked: JsMsg[] = [];
  /** Messages held through an outage (failed or parked): their ack deadline is extended. */
  private readonly held = new Set<JsMsg>();
  private holdTimer: NodeJS.Timeout | undefined;
  private readonly stopRequested: Promise<void>;
  private requestStop: () => void = () => undefined;
  private readonly retry: Pick<ConsumerDeclaration, 'maxDeliver' | 'backoffMs'>;
  /** Logged 'consuming' since the last failure (a pause's re-attach is not news). */
  private announced = false;
  /** A warning logged since the consumer was last attached (one line an outage, not one a retry). */
  private complained = false;
  ready = false;

  constructor(
    readonly declaration: ConsumerDeclaration,
    private readonly handler: ConsumerHandler,
    private readonly deps: ConsumerRunnerDeps,
  ) {
    this.fireAndForget = declaration.ackConfirmation === 'fire-and-forget';
    this.stopRequested = new Promise((resolve) => (this.requestStop = resolve));
    this.retry = {
      maxDeliver: declaration.maxDeliver,
      backoffMs: deps.backoffMs ?? declaration.backoffMs,
    };
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Throws unless attached to the consumer (`messaging_consumer_attached` reads `ready`). */
  async check(): Promise<void> {
    if (!this.ready) throw new Error(this.lastError ?? 'not consuming yet');
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.requestStop();
    clearTimeout(this.retryTimer);
    this.wake?.();
    await this.messages?.close().catch(() => undefined);
    await this.loop;
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    // Parked messages are left to the server, redelivered after ack_wait as any unstarted one.
    for (const msg of this.parked.splice(0)) this.release(msg);
    this.flushAcks();
    this.ready = false;
  }

  private async run(): Promise<void> {
    const { client, namespace } = this.deps;
    const nc = client.connection();
    await Promise.race([nc, this.stopped()]);
    while (!this.stopping) {
      try {
        if (this.pausedOn) {
          await this.resume(this.pausedOn);
          continue;
        }
        const js = client.jetstream();
        const consumer = await js.consumers.get(
          namespace.stream(this.declaration.stream),
          namespace.consumer(this.declaration.durable),
        );
        // A consumer of large messages pulls fewer at a time (ConsumerDeclaration.pullBatch):
        // what the server writes ahead of our reads stays under its slow-consumer limit.
        this.messages = await consumer.consume({
          max_messages: this.declaration.pullBatch ?? this.declaration.concurrency,
          expires: 30_000,
        });
        // Paused while attaching (a handler still running from before): park what comes.
        if (this.pausedOn) void this.messages.close().catch(() => undefined);
        else this.watch(this.messages);
        this.ready = true;
        this.lastError = undefined;
        this.complained = false;
        if (!this.announced)
          this.deps.logger?.info({ consumer: this.declaration.durable }, 'consuming');
        this.announced = true;
        const limit = this.declaration.concurrency;
        for await (const msg of this.messages) {
          // One waiter for a free slot (not Promise.race over every in-flight handler, which
          // added a reaction to each of up to `concurrency` promises per message).
          while (this.inFlight >= limit && !this.pausedOn)
            await new Promise<void>((resolve) => (this.slotFree = resolve));
          if (this.pausedOn) {
            this.park(msg);
            continue;
          }
          this.inFlight += 1;
          this.handle(msg).then(this.finished, this.failed);
        }
        // Closed by a pause: the consumer is still ours, only waiting (ready stays true).
        if (this.pausedOn) continue;
      } catch (error) {
        this.lastError = `consumer ${this.declaration.durable}: ${error instanceof Error ? error.message : String(error)}`;
        // One warning an outage; its retries (every retryDelayMs) only at debug.
        const log = { consumer: this.declaration.durable, err: this.lastError };
        if (this.complained) this.deps.logger?.debug?.(log, 'consumer unavailable; retrying');
        else this.deps.logger?.warn(log, 'consumer unavailable; retrying (provisioned?)');
        this.complained = true;
      }
      this.ready = false;
      this.announced = false;
      if (!this.stopping) await this.sleep(this.deps.retryDelayMs ?? 2_000);
    }
  }

  /**
   * Reads the statuses of one `consume()`: when one says the consumer is gone (`detachCause`),
   * the runner is no longer attached (`ready` false at once, one warning) and closes it; its
   * loop then re-attaches every retryDelayMs until the consumer is there again ('consuming').
   */
  private watch(messages: ConsumerMessages): void {
    void (async () => {
      for await (const status of messages.status()) {
        const cause = detachCause(status);
        if (!cause || this.messages !== messages || this.stopping || this.pausedOn) continue;
        this.ready = false;
        this.lastError = `consumer ${this.declaration.durable}: ${cause}`;
        this.deps.logger?.warn(
          { consumer: this.declaration.durable, err: this.lastError },
          'consumer detached; re-attaching',
        );
        this.complained = true;
        await messages.close().catch(() => undefined);
        return;
      }
    })().catch(() => undefined);
  }

  /**
   * Waits until the dependency answers again (or the runner stops), then starts the parked
   * messages, in the order they were pulled, before pulling on.
   */
  private async resume(gate: DependencyGate): Promise<void> {
    await Promise.race([gate.whenOpen(), this.stopRequested]);
    if (this.stopping) return;
    this.pausedOn = undefined;
    const limit = this.declaration.concurrency;
    while (this.parked.length > 0 && !this.pausedOn && !this.stopping) {
      while (this.inFlight >= limit && !this.pausedOn && !this.stopping)
        await new Promise<void>((resolve) => (this.slotFree = resolve));
      if (this.pausedOn || this.stopping) return;
      const msg = this.parked.shift()!;
      this.release(msg);
      this.inFlight += 1;
      this.handle(msg).then(this.finished, this.failed);
    }
  }

  /** Stops pulling until `gate` answers again; what was pulled already is parked. */
  private pause(gate: DependencyGate): void {
    if (this.pausedOn) return;
    this.pausedOn = gate;
    void this.messages?.close().catch(() => undefined);
    // The pull loop may wait for a slot that held handlers keep: let it park the rest.
    const wake = this.slotFree;
    this.slotFree = undefined;
    wake?.();
  }

  private park(msg: JsMsg): void {
    this.parked.push(msg);
    this.hold(msg);
  }

  /** Keeps `msg` from being redelivered while it waits (working() every third of ack_wait). */
  private hold(msg: JsMsg): void {
    this.held.add(msg);
    if (this.holdTimer) return;
    this.holdTimer = setInterval(
      () => {
        for (const waiting of this.held) {
          try {
            waiting.working();
          } catch {
            // A closed connection: the server redelivers it after ack_wait, which is harmless
            // (handlers are idempotent), once we pull again.
          }
        }
      },
      Math.max(100, Math.floor(this.declaration.ackWaitMs / 3)),
    );
    this.holdTimer.unref();
  }

  private release(msg: JsMsg): void {
    this.held.delete(msg);
    if (this.held.size > 0 || !this.holdTimer) return;
    clearInterval(this.holdTimer);
    this.holdTimer = undefined;
  }

  /** The gate that calls `error` an outage of its dependency, if one does. */
  private async outageOf(error: unknown): Promise<DependencyGate | undefined> {
    for (const gate of this.deps.gates ?? [])
      if (await gate.outage(error).catch(() => false)) return gate;
    return undefined;
  }

  /**
   * Holds a message whose handler failed for an outage until the gate opens: true to run the
   * handler again, false if the runner stops meanwhile.
   */
  private async holdThrough(msg: JsMsg, gate: DependencyGate): Promise<boolean> {
    this.pause(gate);
    this.hold(msg);
    try {
      await Promise.race([gate.whenOpen(), this.stopRequested]);
    } finally {
      this.release(msg);
    }
    return !this.stopping;
  }

  private readonly finished = (): void => {
    this.inFlight -= 1;
    const wake = this.slotFree;
    if (wake) {
      this.slotFree = undefined;
      wake();
    }
    if (this.inFlight === 0 && this.idle.length > 0)
      for (const resolve of this.idle.splice(0)) resolve();
  };

  private readonly flushAcks = (): void => {
    this.acksScheduled = false;
    const acks = this.acks;
    this.acks = [];
    for (const msg of acks) {
      try {
        msg.ack();
      } catch {
        // Throws only on a closed connection: lost like any fire-and-forget ack, redelivered
        // after ack_wait.
      }
    }
  };

  /** settle() itself threw (e.g. nak/term on a connection that just closed): redelivered after ack_wait. */
  private readonly failed = (error: unknown): void => {
    this.deps.logger?.warn(
      {
        consumer: this.declaration.durable,
        err: error instanceof Error ? error.message : String(error),
      },
      'settling a message failed; it will be redelivered',
    );
    this.finished();
  };

  /** Handles and settles one message; exposed for tests. */
  async handle(msg: JsMsg): Promise<Settled> {
    if (!this.declaration.workingWhileHandled) return this.handleOnce(msg);
    // In-progress acks while the handler runs (ConsumerDeclaration.workingWhileHandled): the
    // short ack wait then only ever expires for a holder that died.
    const working = setInterval(
      () => {
        try {
          msg.working();
        } catch {
          // A closed connection: the server redelivers it after ack_wait (handlers are idempotent).
        }
      },
      Math.max(100, Math.floor(this.declaration.ackWaitMs / 3)),
    );
    try {
      return await this.handleOnce(msg);
    } finally {
      clearInterval(working);
    }
  }

  private async handleOnce(msg: JsMsg): Promise<Settled> {
    const deliveryCount = msg.info.deliveryCount;
    let subject = msg.subject;
    let outcome: HandlerOutcome;
    try {
      subject = this.deps.namespace.unprefixSubject(msg.subject);
      const started = this.deliver(subject, msg, deliveryCount);
      if ('invalid' in started) {
        outcome = {
          action: 'dead_letter',
          reason: 'invalid_payload',
          code: 'invalid_payload',
          message: started.invalid,
        };
      } else {
        try {
          outcome = this.outcomeOfResult(subject, deliveryCount, await started.handled);
        } catch (error) {
          outcome = await this.outcomeOfFailure(msg, subject, deliveryCount, error);
        }
      }
    } catch (error) {
      outcome = {
        action: 'dead_letter',
        reason: 'invalid_payload',
        code: 'invalid_subject',
        message: error instanceof Error ? error.message : String(error),
      };
    }
    return this.settle(msg, subject, outcome);
  }

  /**
   * What a handler's resolved value gets: ack, or a nak after the delay it asked for (`Redeliver`:
   * a wait, not a failure; debug line, counted). Past `maxDeliver` (the server would stop
   * delivering it silently) it is dead-lettered as any message that reached it.
   */
  private outcomeOfResult(
    subject: string,
    deliveryCount: number,
    result: void | Redeliver,
  ): HandlerOutcome {
    if (!isRedeliver(result)) return ACK;
    const consumer = this.declaration.durable;
    if (deliveryCount >= this.retry.maxDeliver) {
      const message = `still waiting (${result.reason}) at delivery ${deliveryCount}`;
      return { action: 'dead_letter', reason: 'max_deliver', code: 'redeliver_limit', message };
    }
    this.deps.redelivered?.inc({ consumer, reason: result.reason });
    this.deps.logger?.debug?.(
      { consumer, subject, deliveryCount, reason: result.reason, delayMs: result.redeliverAfterMs },
      'redelivery asked',
    );
    return { action: 'nak', delayMs: result.redeliverAfterMs };
  }

  /**
   * What a failed handler's message gets. A failure a gate calls an outage holds the message and
   * runs the handler again once the dependency answers (up to MAX_HOLDS_PER_DELIVERY times),
   * nothing logged; if the runner stops meanwhile the message is put back (nak), one delivery
   * more. Any other failure: `outcomeOfError`.
   */
  private async outcomeOfFailure(
    msg: JsMsg,
    subject: string,
    deliveryCount: number,
    failure: unknown,
  ): Promise<HandlerOutcome> {
    let error = failure;
    for (let holds = 0; holds < MAX_HOLDS_PER_DELIVERY; holds += 1) {
      const gate = await this.outageOf(error);
      if (!gate) break;
      if (!(await this.holdThrough(msg, gate))) return { action: 'nak', delayMs: 0 };
      const again = this.deliver(subject, msg, deliveryCount);
      if ('invalid' in again) throw new Error(again.invalid);
      try {
        return this.outcomeOfResult(subject, deliveryCount, await again.handled);
      } catch (next) {
        error = next;
      }
    }
    const outcome = outcomeOfError(error, deliveryCount, this.retry);
    this.deps.logger?.warn(
      {
        consumer: this.declaration.durable,
        subject,
        deliveryCount,
        err: error instanceof Error ? error.message : String(error),
        outcome: outcome.action,
      },
      'handler failed',
    );
    return outcome;
  }

  /**
   * Decodes the message and starts its handler. Not async, and the decoded payload is not kept
   * by `handle` while it awaits the handler: a frame suspended at an await keeps its locals
   * alive, so a payload the handler itself lets go (keeping `data` instead) can die young.
   */
  private deliver(
    subject: string,
    msg: JsMsg,
    deliveryCount: number,
  ): { handled: Promise<void | Redeliver> } | { invalid: string } {
    const decoded = this.decode(subject, msg);
    if ('invalid' in decoded) return decoded;
    try {
      return {
        handled: this.handler(
          new Delivery(
            decoded.event,
            decoded.payload,
            subject,
            deliveryCount,
            msg.info.streamSequence,
            msg,
          ),
        ),
      };
    } catch (error) {
      return { handled: Promise.reject(error) };
    }
  }

  /** Decodes the body once and validates it once (the handler gets `parsed.data`). */
  private decode(
    subject: string,
    msg: JsMsg,
  ): { event: EventContract; payload: unknown } | { invalid: string } {
    const event = this.eventOf(subject);
    if (!event) return { invalid: `no event type for subject ${subject}` };
    let json: unknown;
    try {
      json = JSON.parse(decoder.decode(msg.data));
    } catch {
      return { invalid: 'body is not JSON' };
    }
    // A check compiled from the schema accepts what the schema would return unchanged (no copy
    // made); anything else goes to the schema, which decides and says why (ADR 0104).
    if (event.accepts?.(json)) return { event, payload: json };
    const parsed = event.schema.safeParse(json);
    if (!parsed.success) {
      return {
        invalid: parsed.error.issues
          .slice(0, 5)
          .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
          .join('; '),
      };
    }
    return { event, payload: parsed.data };
  }

  /**
   * `eventForSubject` scans every event type and splits strings; a subject's event type depends
   * only on what precedes its last token (`<type>.<token>`), so remember it per prefix.
   */
  private eventOf(subject: string): EventContract | undefined {
    const dot = subject.lastIndexOf('.');
    if (dot < 0) return eventForSubject(subject);
    const prefix = subject.slice(0, dot);
    if (this.events.has(prefix)) return this.events.get(prefix);
    const event = eventForSubject(subject);
    if (this.events.size < EVENT_CACHE_LIMIT) this.events.set(prefix, event);
    return event;
  }

  private async settle(msg: JsMsg, subject: string, outcome: HandlerOutcome): Promise<Settled> {
    if (outcome.action === 'ack') {
      if (this.fireAndForget) {
        // Plain ack, no confirmation round trip: if it is lost, the message comes back after
        // ack_wait and the (idempotent) handler absorbs it. The acks of handlers that finish in
        // the same turn of the event loop go out together: the client writes its buffer to the
        // socket a microtask after the first command, so one ack per write otherwise.
        this.acks.push(msg);
        if (!this.acksScheduled) {
          this.acksScheduled = true;
          setImmediate(this.flushAcks);
        }
        return outcome;
      }
      // ackAck: the server confirmed the ack; a lost ack means a redelivery (handlers are idempotent).
      await msg.ackAck().catch(() => false);
      return outcome;
    }
    if (outcome.action === 'nak') {
      msg.nak(outcome.delayMs);
      return outcome;
    }
    const letter: DeadLetter = {
      id: deadLetterId(this.declaration.durable, msg.info.streamSequence),
      consumer: this.declaration.durable,
      stream: this.declaration.stream,
      subject,
      streamSequence: msg.info.streamSequence,
      deliveryCount: msg.info.deliveryCount,
      reason: outcome.reason,
      error: { code: outcome.code, message: outcome.message.slice(0, 2_000) },
      msgId: msg.headers?.get('Nats-Msg-Id') || null,
      data: decoder.decode(msg.data),
      deadLetteredAt: (this.deps.now?.() ?? new Date()).toISOString(),
    };
    try {
      await this.deps.publisher.publishJson(this.declaration.deadLetterSubject, letter, letter.id);
    } catch (error) {
      // Never drop a message we could not park: retry it later instead.
      const delayMs = this.declaration.backoffMs.at(-1) ?? 30_000;
      this.deps.logger?.error(
        {
          consumer: this.declaration.durable,
          err: error instanceof Error ? error.message : String(error),
        },
        'dead-letter publish failed; nak',
      );
      msg.nak(delayMs);
      return { action: 'nak', delayMs };
    }
    // No term reason: NATS 2.9 only recognises a bare +TERM (the reason is in the dead letter).
    msg.term();
    this.deps.deadLettered?.inc({
      consumer: this.declaration.durable,
      reason: outcome.reason,
      code: outcome.code,
    });
    this.deps.logger?.error(
      { consumer: this.declaration.durable, subject, reason: outcome.reason, code: outcome.code },
      'message dead-lettered',
    );
    return { ...outcome, deadLettered: true };
  }

  private stopped(): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopping) resolve();
      else this.wake = resolve;
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.retryTimer = setTimeout(resolve, ms);
    });
  }
}
