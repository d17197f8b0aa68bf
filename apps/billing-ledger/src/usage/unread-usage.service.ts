import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ledgerUsageConsumersOf, Streams, Subjects, subjectMatches } from '@meridian/contracts';
import { NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { LOGGER } from '@meridian/platform-observability';
import type { Clock } from '@meridian/time';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { Gauge, Registry } from 'prom-client';
import { CLOCK } from '../clock/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { SerialRun } from '../ledger/serial-run';

/** How often partition 0 looks (and a subject counts while its last message is this recent). */
const CHECK_MS = 60_000;
const RECENT_MS = 10 * 60_000;

/**
 * The one way usage is lost from sight: a producer that routes by another rule than this
 * release's usage partitions (ADR 0107) publishes on a subject no usage durable reads (a v2 part
 * on `billing.usage.flushed.v2.<producer id>`, from a release before ADR 0105 step 3, or on
 * `u<k>` with k ≥ 8), and its usage waits in the stream, never charged. Replica 0 looks for usage
 * subjects that every durable misses and that had a message in the last 10 minutes: it logs each
 * as an error and sets `billing_usage_unread_subjects` (alert on > 0). See deploy/README.md,
 * "Upgrades".
 */
@Injectable()
export class UnreadUsageWatch implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private readonly serial = new SerialRun(() => this.look());
  private readonly gauge: Gauge;
  private last: string[] = [];

  constructor(
    private readonly client: NatsClient,
    private readonly namespace: NatsNamespace,
    @Inject(APP_CONFIG)
    private readonly config: Pick<AppConfig, 'LEDGER_PARTITION' | 'LEDGER_TICK_MS'>,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
    registry: Registry,
  ) {
    this.gauge = new Gauge({
      name: 'billing_usage_unread_subjects',
      help: 'Usage subjects with recent messages that no usage durable reads (a producer of another release)',
      registers: [registry],
    });
  }

  /** Replica 0 is the one that looks. */
  get active(): boolean {
    return this.config.LEDGER_PARTITION.index === 0;
  }

  onApplicationBootstrap(): void {
    if (!this.active || this.config.LEDGER_TICK_MS === 0) return;
    this.timer = setInterval(
      () =>
        void this.check().catch((error: unknown) =>
          this.logger.warn(
            { err: error instanceof Error ? error.message : String(error) },
            'unread usage check failed; the next one looks again',
          ),
        ),
      CHECK_MS,
    );
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.serial.idle().catch(() => undefined);
  }

  /** One look (tests call it); answers the unread subjects found (unprefixed). */
  async check(): Promise<string[]> {
    await this.serial.run();
    return this.last;
  }

  private async look(): Promise<void> {
    if (!this.active) return;
    // Fails at once while NATS is down (a look must never wait for it: the stop waits for it).
    const jsm = await jetstreamManager(this.client.require());
    const stream = this.namespace.stream(Streams.BILLING.name);
    const filters = ledgerUsageConsumersOf().map((c) => c.filterSubject);
    const info = await jsm.streams.info(stream, {
      subjects_filter: this.namespace.subject(Subjects.billing.usageAll),
    });
    const since = this.clock.now().getTime() - RECENT_MS;
    const unread: string[] = [];
    for (const prefixed of Object.keys(info.state.subjects ?? {})) {
      const subject = this.namespace.unprefixSubject(prefixed);
      if (filters.some((filter) => subjectMatches(subject, filter))) continue;
      const last = await jsm.streams.getMessage(stream, { last_by_subj: prefixed });
      // Gone meanwhile (the stream's age limit): nothing left to read there.
      if (last === null || last.time.getTime() < since) continue;
      unread.push(subject);
      this.logger.error(
        { subject, last_message_at: last.time.toISOString(), seq: last.seq },
        'usage published on a subject no usage durable reads (a producer of another release routes it); that usage is not charged until a durable reads it',
      );
    }
    this.last = unread.sort();
    this.gauge.set(unread.length);
  }
}
