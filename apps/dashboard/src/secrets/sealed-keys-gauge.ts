import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DbJobGate } from '@meridian/platform-db';
import { LOGGER } from '@meridian/platform-observability';
import type { Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { Gauge, Registry } from 'prom-client';
import { CLOCK } from '../clock.token';
import { AccountSecrets, PREVIOUS_KEYS_SETTING } from './account-secrets';
import { SealedKeysRepository } from './sealed-keys.repository';

/** A count read at a scrape is kept this long: scrapes of every pod do not each scan the table. */
const COUNT_TTL_MS = 60_000;

/**
 * How many accounts' API keys each key sealed (ADR 0603): the gauge
 * `dashboard_sealed_api_keys{key_id, current}` (`key_id="none"`: sealed before the key ring),
 * and at each start one log line when some are not under the current key (an error naming the
 * key ids this dashboard does not hold). `sum(dashboard_sealed_api_keys{current="false"})` at 0
 * is when a previous key may go.
 */
@Injectable()
export class SealedKeysGauge implements OnApplicationBootstrap {
  private cached: { at: number; counts: Map<string, number> } | undefined;

  constructor(
    private readonly repository: SealedKeysRepository,
    private readonly secrets: AccountSecrets,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
    registry: Registry,
    private readonly gate: DbJobGate,
  ) {
    const read = () => this.counts();
    const currentKeyId = secrets.ring.currentKeyId;
    if (!registry.getSingleMetric('dashboard_sealed_api_keys'))
      new Gauge({
        name: 'dashboard_sealed_api_keys',
        help: "Accounts' API keys sealed under each key id (none: before the key ring); current=false ones wait for the reseal",
        labelNames: ['key_id', 'current'],
        registers: [registry],
        async collect() {
          const counts = await read().catch(() => undefined);
          this.reset();
          for (const [keyId, n] of counts ?? [])
            this.set({ key_id: keyId, current: String(keyId === currentKeyId) }, n);
        },
      });
  }

  /**
   * In the background, once Postgres is connected (DbJobGate.runOnce: not a "Driver not
   * Connected" line after the one naming the cause; an outage is the gate's one line, and the
   * count runs again when Postgres answers); any other failure only skips the line.
   */
  onApplicationBootstrap(): void {
    void this.gate
      .runOnce(() => this.counts())
      .then(
        (counts) => this.report(counts),
        (error: unknown) =>
          this.logger.warn({ err: error }, "could not count the accounts' sealed API keys"),
      );
  }

  private async counts(): Promise<Map<string, number>> {
    const now = this.clock.now().getTime();
    if (this.cached && now - this.cached.at < COUNT_TTL_MS) return this.cached.counts;
    const counts = await this.repository.countByKey();
    this.cached = { at: now, counts };
    return counts;
  }

  private report(counts: Map<string, number>): void {
    const { ring } = this.secrets;
    const byKey = Object.fromEntries(counts);
    const unknown = [...counts.keys()].filter((id) => id !== 'none' && !ring.keyIds.includes(id));
    if (unknown.length > 0)
      this.logger.error(
        { byKey, unknownKeyIds: unknown, keyIds: ring.keyIds },
        `accounts' API keys are sealed under key ids this dashboard does not hold ` +
          `(${unknown.join(', ')}): they answer 503 secret_unavailable until that key is in ` +
          `DASHBOARD_SECRETS_KEY or ${PREVIOUS_KEYS_SETTING}`,
      );
    else if ([...counts.keys()].some((id) => id !== ring.currentKeyId))
      this.logger.info(
        { byKey, currentKeyId: ring.currentKeyId },
        "accounts' API keys not under the current key: run the reseal once every pod holds it",
      );
  }
}
