import { DomainError } from '@meridian/errors';
import { isSealedSecretError, parseSecretsKey, SecretKeyRing } from '@meridian/webhooks';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { AppConfig } from '../config/config';

/**
 * The matcher's side of the secrets key ring (ADR 0424): seals under WEBHOOK_SECRETS_KEY, opens
 * under it or WEBHOOK_SECRETS_PREVIOUS_KEYS. A value the ring cannot open is logged, counted
 * (`webhook_secret_open_failures_total`) and answered as a 503 `secret_unavailable`, never a 500.
 */
export class WebhookSecrets {
  readonly ring: SecretKeyRing;
  private readonly refused: Counter<'reason'>;

  constructor(
    config: Pick<AppConfig, 'WEBHOOK_SECRETS_KEY' | 'WEBHOOK_SECRETS_PREVIOUS_KEYS'>,
    private readonly logger: Logger,
    registry: Registry,
  ) {
    this.ring = new SecretKeyRing(
      parseSecretsKey(config.WEBHOOK_SECRETS_KEY),
      config.WEBHOOK_SECRETS_PREVIOUS_KEYS,
    );
    this.refused =
      (registry.getSingleMetric('webhook_secret_open_failures_total') as
        Counter<'reason'> | undefined) ??
      new Counter({
        name: 'webhook_secret_open_failures_total',
        help: 'Sealed signing secrets the key ring could not open (unknown_key, not_opened, malformed)',
        labelNames: ['reason'],
        registers: [registry],
      });
  }

  seal(secret: string): string {
    return this.ring.seal(secret);
  }

  open(webhookId: string, sealed: string): string {
    try {
      return this.ring.open(sealed);
    } catch (error) {
      if (!isSealedSecretError(error)) throw error;
      this.refused.inc({ reason: error.reason });
      this.logger.error(
        { webhookId, reason: error.reason, keyId: error.keyId, err: error.message },
        'signing secret cannot be opened',
      );
      throw new DomainError(
        'secret_unavailable',
        'unavailable',
        "the webhook's signing secret cannot be read by this deployment now; try again later",
        { retryable: true, cause: error },
      );
    }
  }
}
