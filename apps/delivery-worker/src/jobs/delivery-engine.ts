import { DeliveryPhaseSchema, deliveryJobId } from '@meridian/contracts';
import type {
  BalanceStateChanged,
  DeliveryDropReason,
  DeliveryErrorClass,
  DeliveryHealth,
  DeliveryJob,
  DeliveryPhase,
  WebhookStatusEntry,
} from '@meridian/contracts';
import type { Clock } from '@meridian/time';
import {
  isSealedSecretError,
  type SealedSecretError,
  type SecretKeyRing,
} from '@meridian/platform-secrets';
import {
  DELIVERY_WAIT_LIMIT_MS,
  MAX_DELIVERY_ATTEMPTS,
  afterFailedAttempt,
  dropReasonOf,
  queuedEventDropReason,
  signedHeaders,
  signingKeyOf,
  type SigningKey,
} from '@meridian/webhooks';
import type {
  AttemptFinish,
  AttemptRow,
  AttemptStart,
  AttemptsRepository,
  Claim,
} from '../attempts/attempts.repository';
import {
  CircuitBreaker,
  type BreakerAdmission,
  type BreakerChange,
} from '../protection/circuit-breaker';
import { BoundedMemo } from '../common/bounded-memo';
import type { EndpointLimits } from '../protection/endpoint-limits';
import type { SendResult } from '../sending/http-sender';

/** The earlier deliveries of the event as this look read them; the claim refuses a stale read. */
type EarlierSeen = Required<Pick<AttemptStart, 'earlierJobIds' | 'earlierSlot'>>;

export type Step =
  { action: 'done'; reason: string } | { action: 'wait'; ms: number; reason: string };

export interface DeliveryEngineDeps {
  clock: Clock;
  statusOf: (webhookId: string) => WebhookStatusEntry | undefined;
  balanceOf: (accountId: string) => BalanceStateChanged | undefined;
  attempts: Pick<AttemptsRepository, 'latest' | 'claim' | 'finish'>;
  /** `body`: the event's JSON as the bytes that were signed. */
  send: (url: string, headers: Record<string, string>, body: Uint8Array) => Promise<SendResult>;
  limits: EndpointLimits;
  /** Opens the entries' sealed secrets: WEBHOOK_SECRETS_KEY and the previous keys (ADR 0424). */
  secrets: SecretKeyRing;
  publishHealth: (health: DeliveryHealth) => Promise<void>;
  /** Longest single put-back: the job is looked at again after at most this (clock changes, top-ups). */
  recheckMaxMs: number;
  /**
   * How long after this engine starts a later delivery also waits for an earlier one of its
   * event (of those its job names, `earlierDeliveriesOf`) that has no attempt and is not in this
   * process (`earlier_after_start`): the jobs a
   * stopped predecessor had in its hands come back within the consumer's ack wait, the
   * ones it had put back before their first attempt within HELD_RETURN_MS, and until then this
   * process cannot know them. The runtime passes the ack wait + HELD_RETURN_MS; 0 (the
   * default) trusts this process's memory from the start.
   */
  startGraceMs?: number;
  onAttempt?: (
    outcome: DeliveryHealth['outcome'],
    errorClass: string,
    billed: boolean,
    durationMs?: number,
  ) => void;
  onWait?: (reason: string) => void;
  onDropped?: (reason: string) => void;
  /**
   * A secret of the webhook's entry the ring cannot open (a key it does not hold, tampered):
   * the attempt is not made and the job comes back, as any failure to open has always done.
   */
  onSecretRefused?: (error: SealedSecretError, job: DeliveryJob) => void;
  /** The breaker of the job's endpoint URL opened or closed (`CircuitBreaker.record`). */
  onBreaker?: (change: BreakerChange, job: DeliveryJob, host: string) => void;
}

/** How long a job of an unknown webhook (no KV entry yet) is kept before it is dropped. */
const UNKNOWN_WEBHOOK_WAIT_MS = DELIVERY_WAIT_LIMIT_MS;
const HEALTH_MEMORY = 50_000;
/** Opened signing secrets (keyed by their sealed form: a rotation is a new key) and endpoint
 * hosts kept, each up to this many. */
const MEMO_SIZE = 10_000;
/** A held event looks at the balance again this often: a cleared top-up lets it through soon. */
const BALANCE_RECHECK_MS = 30_000;
/** The deliveries of one event, in the order the receiver must get them. */
const PHASE_ORDER: readonly DeliveryPhase[] = DeliveryPhaseSchema.options;
/** A later delivery looks again this long after its earlier one's attempt is due (or in flight). */
const EARLIER_RECHECK_MS = 1_000;
/** A job brought again while this process still looks at it is put back for this long. */
const JOB_IN_HAND_RECHECK_MS = 1_000;
/** ... and this often while its earlier one waits here before its first attempt (up to 10 min). */
const EARLIER_HELD_RECHECK_MS = 2_000;
/**
 * An earlier delivery that made no attempt for this long after its next one was due is taken as
 * gone (its job acked by a drop, or lost): an alive one attempts within the 10-minute wait limits
 * of a due attempt (endpoint busy, then a balance exhausted meanwhile: twice), plus a minute.
 * The later delivery then goes on alone.
 */
const EARLIER_SILENT_MS = 2 * DELIVERY_WAIT_LIMIT_MS + 60_000;
/**
 * The longest put-back of a job without an attempt (a balance look, its endpoint busy, an
 * earlier delivery of its event): within this it is back in a worker's hands, so a restarted
 * worker knows every such job of its route this long (plus the ack wait) after it starts.
 */
export const HELD_RETURN_MS = BALANCE_RECHECK_MS;

/**
 * One delivery job, one decision per look (ADR 0432): drop (webhook not active, or paused since
 * the job was queued: `dropReasonFor`), wait (not
 * due, balance exhausted, endpoint busy: not attempts), or spend attempt n: sent (billed,
 * unless a test), or recorded without sending (breaker open, 10 min at zero balance, 10 min
 * busy; not billed). The attempt log in Postgres is the truth about attempts; JetStream only
 * brings the job back.
 */
export class DeliveryEngine {
  private readonly breakers = new Map<string, CircuitBreaker>();
  /** Since when a due job has been waiting for its endpoint's concurrency or host rate. */
  private readonly busySince = new Map<string, number>();
  /**
   * Jobs held back (waiting) on this replica: since when (the job's creation, for the
   * oldest-waiting gauge) and when last looked at. One held before its first attempt (its
   * endpoint busy, the balance) has no row, and a later delivery of its event waits for it all
   * the same (QA: a busy endpoint got confirmed before unconfirmed). The phases of an event go to
   * one worker (routes are by target host), so this process is where it waits.
   */
  private readonly held = new Map<string, { since: number; lookedAt: number }>();
  /** Jobs being looked at by this process now (a later delivery of the event waits for them). */
  private readonly inHand = new Set<string>();
  /** Health events this process already published (a restart re-publishes once; ids dedupe). */
  private readonly published = new Set<string>();
  /** Sealed secret → its signing keys: opening one (AES-GCM) per attempt cost more than
   * signing, and deriving the keys (a base64 decode, the secret's bytes) per attempt showed too. */
  private readonly opened = new BoundedMemo<SigningKey>(MEMO_SIZE);
  /** Endpoint URL → `hostOf` (a URL parse per attempt showed in the profile). */
  private readonly hosts = new BoundedMemo<string>(MEMO_SIZE);
  /**
   * Until then (the clock's ms) an earlier delivery without an attempt that is not here may be
   * held by a stopped predecessor (its message not back yet): a later one waits for it.
   */
  private readonly knowsHeldFrom: number;

  constructor(private readonly deps: DeliveryEngineDeps) {
    this.knowsHeldFrom = deps.clock.now().getTime() + (deps.startGraceMs ?? 0);
  }

  breakerOf(url: string): CircuitBreaker {
    let breaker = this.breakers.get(url);
    if (breaker === undefined) {
      breaker = new CircuitBreaker();
      this.breakers.set(url, breaker);
    }
    return breaker;
  }

  oldestHeldMs(): number {
    const now = this.deps.clock.now().getTime();
    let oldest = now;
    for (const { since } of this.held.values()) if (since < oldest) oldest = since;
    return now - oldest;
  }

  /**
   * `firstDelivery`: JetStream brings this job for the first time. Then the job has no attempt
   * yet, except when the same job was published again as a new message (a matcher re-publishing
   * after the stream's duplicate window): the latest-attempt read is skipped, and the claim of
   * attempt `job.attempt` checks the guess (a job's attempts are numbered on from `job.attempt`,
   * so any earlier look left that row; a lost claim puts the job back for a full look).
   */
  async handle(job: DeliveryJob, firstDelivery = false): Promise<Step> {
    // The same job brought again while this process still looks at it (JetStream redelivered a
    // message whose handler outlived the ack wait): the look in hand decides, and its ack or
    // put-back settles the message. A second look would read the first one's attempt in flight
    // as interrupted, close it as a failure, and the first one's success would be lost from the
    // log while its ack removed the job (kill-9 int spec, CI: one job left "interrupted").
    if (this.inHand.has(job.id)) {
      this.deps.onWait?.('job_in_hand');
      return this.wait(JOB_IN_HAND_RECHECK_MS, 'job_in_hand');
    }
    let step: Step;
    this.inHand.add(job.id);
    try {
      step = await this.decide(job, firstDelivery);
    } finally {
      this.inHand.delete(job.id);
    }
    if (step.action === 'done') {
      this.held.delete(job.id);
      this.busySince.delete(job.id);
    } else {
      const since = this.held.get(job.id)?.since ?? Date.parse(job.createdAt);
      this.held.set(job.id, { since, lookedAt: this.deps.clock.now().getTime() });
      this.deps.onWait?.(step.reason);
    }
    return step;
  }

  private async decide(job: DeliveryJob, firstDelivery: boolean): Promise<Step> {
    const { clock } = this.deps;
    const now = clock.now();
    const entry = this.deps.statusOf(job.webhookId);
    if (entry === undefined) {
      if (now.getTime() - Date.parse(job.createdAt) < UNKNOWN_WEBHOOK_WAIT_MS)
        return this.wait(5_000, 'webhook_unknown');
      return this.drop('webhook_unknown');
    }
    const dropReason = dropReasonFor(job, entry);

    // The event's earlier deliveries (the unconfirmed one before the confirmed one, both before
    // a correction), read in the same shared statement as this job's own latest attempt.
    const earlierIds = dropReason === null && !job.test ? earlierDeliveriesOf(job) : [];
    // One being looked at here may be claiming its first attempt: its row is not there yet.
    if (earlierIds.some((id) => this.inHand.has(id)))
      return this.wait(EARLIER_RECHECK_MS, 'earlier_delivery');
    // A drop is recorded from what was attempted, so it always reads the log.
    const readOwn = !firstDelivery || dropReason !== null;
    const [own, ...earlier] = await Promise.all([
      readOwn ? this.deps.attempts.latest(job.id) : undefined,
      ...earlierIds.map((id) => this.deps.attempts.latest(id)),
    ]);
    let latest = own;
    if (latest && latest.outcome === null) latest = await this.closeInterrupted(job, latest, now);
    if (latest) {
      await this.publishOnce(job, latest);
      if (latest.outcome === 'success') return { action: 'done', reason: 'delivered' };
      if (job.test || slotOf(latest) >= MAX_DELIVERY_ATTEMPTS) return this.drop('given_up');
    }
    const attempt = latest ? latest.attempt + 1 : job.attempt;
    if (dropReason !== null) return this.dropQueued(job, attempt, dropReason);
    const before = this.earlierState(earlierIds, earlier, now.getTime());
    // What the claim checks against (a stale read is refused, `busy`): the slots seen taken.
    const seen: EarlierSeen = {
      earlierJobIds: earlierIds,
      earlierSlot: Math.max(0, ...earlier.map((row) => row?.slot ?? 0)),
    };
    if (before.kind === 'spent') return this.eventAttemptsSpent(job, attempt);
    if (before.kind === 'unfinished') {
      // Not an attempt: no wait limit runs meanwhile (the endpoint's starts when it is due).
      this.busySince.delete(job.id);
      // Without an attempt of its own it comes back within HELD_RETURN_MS: a worker restarted
      // meanwhile meets it within its start grace, and its later deliveries wait for it there.
      const ms = latest ? before.recheckMs : Math.min(before.recheckMs, HELD_RETURN_MS);
      return this.wait(ms, before.reason);
    }
    const dueAt = latest
      ? afterFailedAttempt(slotOf(latest), latest.finishedAt ?? latest.startedAt)
      : undefined;
    const dueMs = dueAt?.kind === 'retry' ? dueAt.dueAt.getTime() : Date.parse(job.createdAt);
    if (now.getTime() < dueMs) return this.wait(dueMs - now.getTime(), 'not_due');

    if (!job.test) {
      const balance = this.deps.balanceOf(job.accountId);
      if (balance?.state === 'exhausted') {
        // The event waits once, up to 10 min from the later of the exhaustion and its own
        // creation; after that its scheduled attempts go through as no_balance failures.
        const since = Math.max(
          Date.parse(balance.exhaustedSince ?? balance.at),
          Date.parse(job.createdAt),
          before.readyAt,
        );
        const waited = now.getTime() - since;
        if (waited < DELIVERY_WAIT_LIMIT_MS)
          return this.wait(
            Math.min(DELIVERY_WAIT_LIMIT_MS - waited, BALANCE_RECHECK_MS),
            'no_balance',
          );
        return this.recordUnsent(job, seen, attempt, 'failure', 'no_balance', 'balance exhausted');
      }
    }

    const breaker = job.test ? undefined : this.breakerOf(entry.targetUrl);
    // The owner says the endpoint is fixed: the next attempt is the breaker's probe.
    if (breaker && entry.resumedAt !== undefined && breaker.stateAt(now.getTime()) !== 'closed')
      breaker.resumed(Date.parse(entry.resumedAt));
    const admission: BreakerAdmission = breaker?.admit(now.getTime()) ?? 'send';
    if (admission === 'skip')
      return this.recordUnsent(
        job,
        seen,
        attempt,
        'skipped_breaker_open',
        'breaker_open',
        'circuit breaker open',
      );

    const host = this.hosts.get(entry.targetUrl, hostOf);
    const gate = this.deps.limits.tryAcquire(entry.targetUrl, host, job.accountId, now.getTime());
    if (!gate.ok) {
      breaker?.release(admission);
      // One rule for both limits (its endpoint's, its account's): since the first busy look.
      const since = this.busySince.get(job.id) ?? now.getTime();
      this.busySince.set(job.id, since);
      const busyFor = now.getTime() - since;
      // Back off while it stays busy: ~40 looks in 10 min, not one per 250 ms.
      if (busyFor < DELIVERY_WAIT_LIMIT_MS)
        return this.wait(Math.max(gate.retryAfterMs, Math.min(15_000, busyFor / 4)), gate.reason);
      this.busySince.delete(job.id);
      // The contract's one error class for a limit waited out (`endpoint_busy`); the text says
      // which limit it was.
      return this.recordUnsent(
        job,
        seen,
        attempt,
        'failure',
        'endpoint_busy',
        gate.reason === 'account_busy' ? 'account busy for 10 min' : 'endpoint busy for 10 min',
      );
    }
    this.busySince.delete(job.id);
    try {
      return await this.attempt(job, entry, seen, attempt, breaker, admission);
    } finally {
      gate.release();
    }
  }

  private async attempt(
    job: DeliveryJob,
    entry: WebhookStatusEntry,
    seen: EarlierSeen,
    attempt: number,
    breaker: CircuitBreaker | undefined,
    admission: BreakerAdmission,
  ): Promise<Step> {
    const { clock } = this.deps;
    const startedAt = clock.now();
    const keys: SigningKey[] = [];
    try {
      // Every previous secret signs until its own expiry; the earlier ones (beyond the latest)
      // travel in `earlierSecrets` (ADR 0423 amendment).
      for (const s of [...entry.secrets, ...(entry.earlierSecrets ?? [])])
        if (s.expiresAt === null || Date.parse(s.expiresAt) > startedAt.getTime())
          keys.push(
            this.opened.get(s.sealed, (sealed) => signingKeyOf(this.deps.secrets.open(sealed))),
          );
    } catch (error) {
      breaker?.release(admission);
      if (isSealedSecretError(error)) this.deps.onSecretRefused?.(error, job);
      throw error;
    }
    const id = attemptId(job.id, attempt);
    const claimed = await this.deps.attempts.claim({
      id,
      jobId: job.id,
      attempt,
      eventKey: eventAttemptsKey(job),
      accountId: job.accountId,
      webhookId: job.webhookId,
      startedAt,
      billed: !job.test,
      ...seen,
    });
    if (typeof claimed !== 'object') {
      breaker?.release(admission);
      return this.notClaimed(job, attempt, claimed);
    }
    // Encoded once: both HMACs read these bytes and the request sends them.
    const body = Buffer.from(JSON.stringify(job.payload), 'utf8');
    const headers = signedHeaders(keys, job.id, Math.floor(startedAt.getTime() / 1_000), body);
    const result = await this.deps.send(entry.targetUrl, headers, body);
    const finishedAt = clock.now();
    const change =
      admission === 'skip'
        ? undefined
        : breaker?.record(finishedAt.getTime(), result.ok, admission);
    if (change) this.deps.onBreaker?.(change, job, this.hosts.get(entry.targetUrl, hostOf));
    const finish: AttemptFinish = {
      outcome: result.ok ? 'success' : 'failure',
      finishedAt,
      durationMs: result.durationMs,
    };
    if (result.statusCode !== undefined) finish.statusCode = result.statusCode;
    if (result.errorClass) finish.errorClass = result.errorClass;
    if (result.error) finish.error = result.error;
    if (result.responseBody !== undefined && !result.ok) finish.responseBody = result.responseBody;
    await this.deps.attempts.finish(id, finish);
    this.deps.onAttempt?.(
      finish.outcome,
      finish.errorClass ?? 'none',
      !job.test,
      result.durationMs,
    );
    const row = rowOf(job, attempt, claimed.slot, startedAt, !job.test, finish);
    await this.publishOnce(job, row);
    return this.after(job, row);
  }

  /** An attempt spent without a request (no balance, breaker open, endpoint busy): not billed. */
  private async recordUnsent(
    job: DeliveryJob,
    seen: EarlierSeen,
    attempt: number,
    outcome: DeliveryHealth['outcome'],
    errorClass: DeliveryErrorClass,
    error: string,
  ): Promise<Step> {
    const now = this.deps.clock.now();
    const finish: AttemptFinish = { outcome, finishedAt: now, errorClass, error };
    const claimed = await this.deps.attempts.claim(
      {
        id: attemptId(job.id, attempt),
        jobId: job.id,
        attempt,
        eventKey: eventAttemptsKey(job),
        accountId: job.accountId,
        webhookId: job.webhookId,
        startedAt: now,
        billed: false,
        ...seen,
      },
      finish,
    );
    if (typeof claimed !== 'object') return this.notClaimed(job, attempt, claimed);
    this.deps.onAttempt?.(outcome, errorClass, false);
    const row = rowOf(job, attempt, claimed.slot, now, false, finish);
    await this.publishOnce(job, row);
    return this.after(job, row);
  }

  /**
   * A claim refused: the event's 8 are spent (given up unsent); another delivery of the event is
   * attempting, or an earlier one attempted since this look read it (`busy`: one delivery of an
   * event attempts at a time, also across workers; look again, as after an earlier delivery's
   * attempt in flight); or the row or slot was taken at the same moment (look again).
   */
  private notClaimed(
    job: DeliveryJob,
    attempt: number,
    claim: Exclude<Claim, object>,
  ): Promise<Step> | Step {
    if (claim === 'spent') return this.eventAttemptsSpent(job, attempt);
    if (claim === 'busy') return this.wait(EARLIER_RECHECK_MS, 'event_busy');
    return this.wait(1_000, 'claimed_elsewhere');
  }

  /**
   * A queued event of a webhook that is no longer active is dropped, and the drop is recorded
   * (spec: drop reasons are recorded for queued events): one health record, outcome `dropped`,
   * not an attempt (not billed, not counted), with the event so the owner may replay it.
   */
  private async dropQueued(
    job: DeliveryJob,
    attempt: number,
    reason: DeliveryDropReason,
    error = `dropped: ${reason}`,
  ): Promise<Step> {
    const id = `${job.id}:dropped`;
    if (!this.published.has(id)) {
      await this.deps.publishHealth({
        id,
        webhookId: job.webhookId,
        accountId: job.accountId,
        eventId: job.eventId,
        phase: job.phase,
        attempt,
        outcome: 'dropped',
        dropReason: reason,
        billed: false,
        final: true,
        error,
        ...(job.test ? { test: true } : {}),
        payload: job.payload,
        at: this.deps.clock.now().toISOString(),
      });
      this.remember(id);
    }
    return this.drop(reason);
  }

  /**
   * The event's 8 attempts (spec: "one event is attempted at most 8 times") are spent by its
   * deliveries: this one is given up without a request, recorded as a drop with the event (not
   * an attempt: not billed, not in `failed_total`; listed and replayable like a given-up event).
   */
  private eventAttemptsSpent(job: DeliveryJob, attempt: number): Promise<Step> {
    return this.dropQueued(
      job,
      attempt,
      'attempts_spent',
      `given up: the event's ${MAX_DELIVERY_ATTEMPTS} attempts are spent (by all its deliveries)`,
    );
  }

  /**
   * Where the event's earlier deliveries stand (their latest attempts): one is `unfinished` when
   * it is in flight, or its latest attempt failed and the event has slots left (it will try
   * again: this one looks again about when that attempt is due); `spent` when a failed one took
   * the event's last slot; else `clear` (none attempted, delivered, or silent long past its due
   * time), `readyAt` being when the last of them finished (the balance wait counts from it).
   */
  private earlierState(
    ids: readonly string[],
    rows: readonly (AttemptRow | undefined)[],
    nowMs: number,
  ):
    | { kind: 'unfinished'; recheckMs: number; reason: string }
    | { kind: 'spent' }
    | { kind: 'clear'; readyAt: number } {
    let readyAt = 0;
    const reason = 'earlier_delivery';
    for (const [i, row] of rows.entries()) {
      // No attempt yet, but waiting here (endpoint busy, balance): it goes first.
      const lookedAt = this.held.get(ids[i]!)?.lookedAt;
      if (row === undefined && lookedAt !== undefined && nowMs - lookedAt < EARLIER_SILENT_MS)
        return { kind: 'unfinished', recheckMs: EARLIER_HELD_RECHECK_MS, reason };
      // No attempt and not here, just after this worker started: a stopped predecessor may have
      // held it (in its hands or put back); its message is not back yet (QA: after a kill -9,
      // `confirmed` went 40 s before `unconfirmed`, which came back after the ack wait).
      if (row === undefined && nowMs < this.knowsHeldFrom)
        return {
          kind: 'unfinished',
          recheckMs: Math.min(this.knowsHeldFrom - nowMs, EARLIER_HELD_RECHECK_MS),
          reason: 'earlier_after_start',
        };
      // No attempt (dropped, never matched, not started) or one made before the shared budget.
      if (row === undefined || row.slot === null) continue;
      if (row.outcome === null)
        return { kind: 'unfinished', recheckMs: EARLIER_RECHECK_MS, reason };
      const finishedMs = (row.finishedAt ?? row.startedAt).getTime();
      readyAt = Math.max(readyAt, finishedMs);
      if (row.outcome === 'success') continue;
      const next = afterFailedAttempt(row.slot, row.finishedAt ?? row.startedAt);
      if (next.kind === 'given_up') return { kind: 'spent' };
      const dueMs = next.dueAt.getTime();
      if (nowMs - dueMs < EARLIER_SILENT_MS)
        return {
          kind: 'unfinished',
          recheckMs: Math.max(dueMs - nowMs, 0) + EARLIER_RECHECK_MS,
          reason,
        };
    }
    return { kind: 'clear', readyAt };
  }

  private after(job: DeliveryJob, row: AttemptRow): Step {
    if (row.outcome === 'success') return { action: 'done', reason: 'delivered' };
    if (job.test) return this.drop('given_up');
    const next = afterFailedAttempt(slotOf(row), row.finishedAt ?? row.startedAt);
    if (next.kind === 'given_up') return this.drop('given_up');
    return this.wait(next.dueAt.getTime() - this.deps.clock.now().getTime(), 'not_due');
  }

  private async closeInterrupted(
    job: DeliveryJob,
    row: AttemptRow,
    now: Date,
  ): Promise<AttemptRow> {
    const finish: AttemptFinish = {
      outcome: 'failure',
      finishedAt: now,
      errorClass: 'interrupted',
      error: 'the worker stopped during the attempt',
    };
    await this.deps.attempts.finish(row.id, finish);
    this.deps.onAttempt?.('failure', 'interrupted', row.billed);
    return (await this.deps.attempts.latest(job.id)) ?? row;
  }

  private async publishOnce(job: DeliveryJob, row: AttemptRow): Promise<void> {
    if (this.published.has(row.id) || row.outcome === null) return;
    const final = row.outcome === 'success' || job.test || slotOf(row) >= MAX_DELIVERY_ATTEMPTS;
    await this.deps.publishHealth({
      id: row.id,
      webhookId: job.webhookId,
      accountId: job.accountId,
      eventId: job.eventId,
      phase: job.phase,
      attempt: row.attempt,
      ...(row.slot !== null ? { eventAttempt: row.slot } : {}),
      outcome: row.outcome,
      billed: row.billed,
      final,
      ...(row.statusCode !== null ? { statusCode: row.statusCode } : {}),
      ...(row.error !== null ? { error: row.error.slice(0, 1024) } : {}),
      ...(row.durationMs !== null ? { durationMs: row.durationMs } : {}),
      ...(row.errorClass !== null ? { errorClass: row.errorClass } : {}),
      ...(row.responseBody !== null ? { responseBody: row.responseBody.slice(0, 4096) } : {}),
      ...(job.test ? { test: true } : {}),
      ...(final && row.outcome !== 'success' ? { payload: job.payload } : {}),
      at: (row.finishedAt ?? row.startedAt).toISOString(),
    });
    this.remember(row.id);
  }

  private remember(healthId: string): void {
    if (this.published.size >= HEALTH_MEMORY) this.published.clear();
    this.published.add(healthId);
  }

  private wait(ms: number, reason: string): Step {
    return { action: 'wait', ms: Math.max(0, Math.min(ms, this.deps.recheckMaxMs)), reason };
  }

  private drop(reason: string): Step {
    this.deps.onDropped?.(reason);
    return { action: 'done', reason };
  }
}

/**
 * Why the job is dropped now (null: go on). A webhook not active drops it; an active one also
 * drops a job queued before its latest pause (a pause and resume between two looks; spec: paused
 * webhooks' events are not sent after the resume), by the entry's `reactivated`, which the
 * matcher stamps with the clock that stamped the job's `createdAt`. An entry without it (an older
 * matcher) drops by the status only. A test delivery (one request the owner asked for) is not
 * dropped for a pause that has ended.
 */
export function dropReasonFor(
  job: DeliveryJob,
  entry: WebhookStatusEntry,
): DeliveryDropReason | null {
  const { reactivated } = entry;
  if (job.test || reactivated === undefined) return dropReasonOf(entry.status);
  return queuedEventDropReason(entry.status, new Date(job.createdAt), {
    at: new Date(reactivated.at),
    from: reactivated.from,
  });
}

export function attemptId(jobId: string, attempt: number): string {
  return `${jobId}:${attempt}`;
}

/**
 * The attempt budget a job spends from: its webhook and event, whatever the phase (unconfirmed,
 * confirmed and a removal correction share the event's 8), plus what follows the phase in the
 * job id (a replay's `:replay-<stamp>`: a replay the owner asked for is a fresh run of 8).
 */
export function eventAttemptsKey(job: DeliveryJob): string {
  const base = deliveryJobId(job.webhookId, job.eventId, job.phase);
  const rest = job.id.startsWith(base) ? job.id.slice(base.length) : `:${job.id}`;
  return `${job.webhookId}:${job.eventId}${rest}`;
}

/**
 * The job ids of the event's deliveries that go before this one (same webhook, event and replay
 * stamp): none for an unconfirmed delivery, the unconfirmed one for the confirmed one, both for
 * a correction; of those, only the phases the job names as published before it
 * (`earlierPhases`; a job without it: all). A job id of another form has none.
 */
export function earlierDeliveriesOf(job: DeliveryJob): string[] {
  const base = deliveryJobId(job.webhookId, job.eventId, job.phase);
  if (!job.id.startsWith(base)) return [];
  const rest = job.id.slice(base.length);
  return PHASE_ORDER.slice(0, PHASE_ORDER.indexOf(job.phase))
    .filter((phase) => job.earlierPhases?.includes(phase) ?? true)
    .map((phase) => `${deliveryJobId(job.webhookId, job.eventId, phase)}${rest}`);
}

/**
 * The attempt's number on the schedule: its slot of the event's 8 (spec: one event is attempted
 * at most 8 times), or, made before the shared budget, its number within its delivery.
 */
function slotOf(row: AttemptRow): number {
  return row.slot ?? row.attempt;
}

/** The destination host of the 200 req/s bucket: the name without the port (one machine). */
export function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

function rowOf(
  job: DeliveryJob,
  attempt: number,
  slot: number,
  startedAt: Date,
  billed: boolean,
  finish: AttemptFinish,
): AttemptRow {
  return {
    id: attemptId(job.id, attempt),
    jobId: job.id,
    attempt,
    slot,
    startedAt,
    finishedAt: finish.finishedAt,
    outcome: finish.outcome,
    billed,
    errorClass: finish.errorClass ?? null,
    statusCode: finish.statusCode ?? null,
    durationMs: finish.durationMs ?? null,
    error: finish.error ?? null,
    responseBody: finish.responseBody ?? null,
  };
}
