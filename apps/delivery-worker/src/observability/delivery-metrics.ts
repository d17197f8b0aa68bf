import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Every metric of delivery-worker, registered on the app's Registry (served on /metrics). */
export class DeliveryMetrics {
  /** One per attempt recorded: outcome success/failure/skipped_breaker_open, error class or none. */
  readonly attempts: Counter<'outcome' | 'error_class' | 'billed'>;
  readonly attemptDuration: Histogram<'outcome'>;
  /** Jobs finished without (more) attempts: not active webhooks, given up, unknown webhooks. */
  readonly dropped: Counter<'reason'>;
  /** A due attempt put back without being made (schedule, balance, concurrency, rate). */
  readonly waits: Counter<'reason'>;
  readonly usageParts: Counter<'outcome'>;
  /** A webhook's sealed secret the key ring could not open (ADR 0424), by reason. */
  readonly secretsRefused: Counter<'reason'>;
  /** Attempts deleted from the attempt log once older than ATTEMPT_LOG_RETENTION_DAYS. */
  readonly attemptsPruned: Counter;
  readonly queueDepth: Gauge;
  readonly oldestWaiting: Gauge;

  constructor(
    registry: Registry,
    sources: { queueDepth: () => Promise<number>; oldestWaitingMs: () => number },
  ) {
    this.attempts = new Counter({
      name: 'delivery_attempts_total',
      help: 'Delivery attempts by outcome and error class (billed: 25 CU taken)',
      labelNames: ['outcome', 'error_class', 'billed'],
      registers: [registry],
    });
    this.attemptDuration = new Histogram({
      name: 'delivery_attempt_duration_seconds',
      help: 'Duration of attempts that were sent',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [registry],
    });
    this.dropped = new Counter({
      name: 'delivery_jobs_dropped_total',
      help: 'Delivery jobs finished without an attempt, by drop reason',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.waits = new Counter({
      name: 'delivery_waits_total',
      help: 'Due attempts put back without being made, by reason',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.usageParts = new Counter({
      name: 'delivery_usage_parts_published_total',
      help: 'Usage flush parts published to billing, by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.secretsRefused = new Counter({
      name: 'delivery_secret_open_failures_total',
      help: 'Signing secrets the key ring could not open (unknown_key, not_opened, malformed); the job is retried',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.attemptsPruned = new Counter({
      name: 'delivery_attempt_log_pruned_total',
      help: 'Attempts deleted from the attempt log, older than its retention and billed',
      registers: [registry],
    });
    this.queueDepth = new Gauge({
      name: 'delivery_queue_depth',
      help: 'Delivery jobs waiting on the stream (pending + delivered, not yet acked)',
      registers: [registry],
      async collect() {
        this.set(await sources.queueDepth().catch(() => Number.NaN));
      },
    });
    this.oldestWaiting = new Gauge({
      name: 'delivery_oldest_waiting_event_age_seconds',
      help: 'Age of the oldest event this replica holds back (scheduled retry or a wait)',
      registers: [registry],
      collect() {
        this.set(sources.oldestWaitingMs() / 1_000);
      },
    });
  }
}
