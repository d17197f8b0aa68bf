import { parseSecretsKey, SealedSecretOpener, SecretKeyRing } from '@meridian/platform-secrets';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { AppConfig } from '../config/config';

/**
 * The matcher's side of the secrets key ring (ADR 0424): seals under WEBHOOK_SECRETS_KEY, opens
 * under it or WEBHOOK_SECRETS_PREVIOUS_KEYS. A value the ring cannot open is logged, counted
 * (`webhook_secret_open_failures_total`) and answered as a 503 `secret_unavailable`, never a 500.
 */
export class WebhookSecrets extends SealedSecretOpener {
  constructor(
    config: Pick<AppConfig, 'WEBHOOK_SECRETS_KEY' | 'WEBHOOK_SECRETS_PREVIOUS_KEYS'>,
    logger: Logger,
    registry: Registry,
  ) {
    super(
      new SecretKeyRing(
        parseSecretsKey(config.WEBHOOK_SECRETS_KEY),
        config.WEBHOOK_SECRETS_PREVIOUS_KEYS,
      ),
      logger,
      registry,
      {
        metric: {
          name: 'webhook_secret_open_failures_total',
          help: 'Sealed signing secrets the key ring could not open (unknown_key, not_opened, malformed)',
        },
        subjectField: 'webhookId',
        logMessage: 'signing secret cannot be opened',
        unavailableMessage:
          "the webhook's signing secret cannot be read by this deployment now; try again later",
      },
    );
  }
}
