import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import {
  ledgerPartitionOf,
  ledgerPartitionToken,
  ledgerUsageConsumers,
  Subjects,
} from '@meridian/contracts';
import {
  JetStreamConsumers,
  NatsClient,
  NatsNamespace,
  type StandbyRunner,
} from '@meridian/platform-messaging';
import { LOGGER } from '@meridian/platform-observability';
import type { Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { Gauge, Registry } from 'prom-client';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { SerialRun } from '../ledger/serial-run';
import { UsageConsumer } from './usage.consumer';

/** Unanswered asks in a row before a partition is stood in for. */
const MISSES = 3;
/** How long one ask waits for the answer (no responder at all fails at once). */
const ASK_TIMEOUT_MS = 1_000;

/**
 * Partitioned usage without a partition left behind (ADR 0105 step 3). Each replica answers
 * on its partition's `control.ledger.partition.v1.u<i>` (core NATS, in no stream) while it
 * runs, and asks the other partitions' every `LEDGER_TAKEOVER_MS / 3`. One that has not
 * answered three times in a row (crashed, its node gone, frozen, stopped) is stood in for: this
 * replica reads that partition's durables too, into its own pipeline, until it answers again.
 * A part applies the same on any replica (claimed ids, row locks), so a stand-in that overlaps
 * with the owner's return is only slower for that while, never wrong; several replicas standing
 * in for one partition share its durable the same way. `billing_usage_partitions_stood_in`
 * counts the partitions this replica reads for others.
 */
@Injectable()
export class PartitionTakeover implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private answering: Subscription | undefined;
  private readonly serial = new SerialRun(() => this.look());
  private readonly misses = new Map<number, number>();
  private readonly standing = new Map<number, StandbyRunner[]>();
  private readonly gauge: Gauge;
  private closed = false;

  constructor(
    private readonly consumers: JetStreamConsumers,
    private readonly usage: UsageConsumer,
    private readonly client: NatsClient,
    private readonly namespace: NatsNamespace,
    @Inject(APP_CONFIG)
    private readonly config: Pick<AppConfig, 'LEDGER_PARTITION' | 'LEDGER_TAKEOVER_MS'>,
    @Inject(LOGGER) private readonly logger: Logger,
    registry: Registry,
  ) {
    this.gauge = new Gauge({
      name: 'billing_usage_partitions_stood_in',
      help: 'Ledger partitions whose usage this replica reads because their own replica does not answer',
      registers: [registry],
    });
  }

  /** Partitions this replica stands in for now. */
  get standingIn(): number[] {
    return [...this.standing.keys()].sort((a, b) => a - b);
  }

  /**
   * Whether this replica applies the account's usage now: its partition is this replica's own
   * or one it stands in for (always, with one partition).
   */
  applies(accountId: string): boolean {
    const { index, count } = this.config.LEDGER_PARTITION;
    if (count <= 1) return true;
    const partition = ledgerPartitionOf(accountId, count);
    return partition === index || this.standing.has(partition);
  }

  onApplicationBootstrap(): void {
    const { index, count } = this.config.LEDGER_PARTITION;
    if (count <= 1) return;
    // Not awaited: the app starts while NATS is down, and answers once it is connected.
    void this.client
      .connection()
      .then((nc) => {
        if (this.closed) return;
        this.answering = nc.subscribe(this.subjectOf(index), {
          callback: (_error, msg) => {
            msg.respond();
          },
        });
      })
      .catch((error: unknown) =>
        this.logger.error(
          { err: error instanceof Error ? error.message : String(error) },
          'cannot answer for this ledger partition; the others will stand in for it',
        ),
      );
    if (this.config.LEDGER_TAKEOVER_MS === 0) return;
    this.timer = setInterval(
      () => void this.check().catch(() => undefined),
      Math.max(100, Math.round(this.config.LEDGER_TAKEOVER_MS / MISSES)),
    );
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.answering?.unsubscribe();
    await this.serial.idle().catch(() => undefined);
    for (const partition of this.standingIn) await this.release(partition, 'stopping');
  }

  /** One round of asks (the timer's; tests call it): answers the partitions stood in for after it. */
  async check(): Promise<number[]> {
    await this.serial.run();
    return this.standingIn;
  }

  private async look(): Promise<void> {
    const { index, count } = this.config.LEDGER_PARTITION;
    if (count <= 1 || this.config.LEDGER_TAKEOVER_MS === 0 || this.closed) return;
    // Not connected: no ask can tell anything (and a look must never wait for NATS: the stop
    // waits for it).
    const nc = this.client.current();
    if (nc === undefined) return;
    for (let partition = 0; partition < count; partition++) {
      if (partition === index) continue;
      const answered = await nc
        .request(this.subjectOf(partition), undefined, { timeout: ASK_TIMEOUT_MS })
        .then(
          () => true,
          () => false,
        );
      if (answered) {
        this.misses.set(partition, 0);
        if (this.standing.has(partition)) await this.release(partition, 'answers');
        continue;
      }
      const misses = (this.misses.get(partition) ?? 0) + 1;
      this.misses.set(partition, misses);
      if (misses >= MISSES && !this.standing.has(partition) && !this.closed)
        this.standIn(partition, count);
    }
    this.gauge.set(this.standing.size);
  }

  private standIn(partition: number, count: number): void {
    const runners = ledgerUsageConsumers({ index: partition, count }).map((declaration) =>
      this.consumers.standby(declaration, (message) => this.usage.handle(message)),
    );
    this.standing.set(partition, runners);
    for (const runner of runners) runner.start();
    this.logger.warn(
      { partition: `${partition}/${count}`, durables: runners.map((r) => r.declaration.durable) },
      'ledger partition does not answer; applying its usage here until it does',
    );
  }

  private async release(partition: number, why: 'answers' | 'stopping'): Promise<void> {
    const runners = this.standing.get(partition) ?? [];
    this.standing.delete(partition);
    await Promise.all(runners.map((runner) => runner.stop()));
    this.gauge.set(this.standing.size);
    this.logger.info(
      { partition: `${partition}/${this.config.LEDGER_PARTITION.count}` },
      why === 'answers'
        ? 'ledger partition answers again; no longer applying its usage here'
        : 'stopping; no longer applying the usage of that ledger partition here',
    );
  }

  private subjectOf(partition: number): string {
    return this.namespace.subject(
      Subjects.control.ledgerPartitionAlive.of(ledgerPartitionToken(partition)),
    );
  }
}
