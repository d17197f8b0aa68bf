import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { LOGGER } from '@meridian/platform-observability';
import { isSealedSecretError, parseSecretsKey, SecretKeyRing } from '@meridian/webhooks';
import type { Logger } from 'pino';
import { Counter, Registry } from 'prom-client';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';

/** The setting a value's missing key goes into (named by the ring's `unknown_key` message). */
export const PREVIOUS_KEYS_SETTING = 'DASHBOARD_SECRETS_PREVIOUS_KEYS';

/** The ring of DASHBOARD_SECRETS_KEY and DASHBOARD_SECRETS_PREVIOUS_KEYS (ADR 0603). */
export function dashboardKeyRing(
  config: Pick<AppConfig, 'DASHBOARD_SECRETS_KEY' | 'DASHBOARD_SECRETS_PREVIOUS_KEYS'>,
): SecretKeyRing {
  return new SecretKeyRing(
    parseSecretsKey(config.DASHBOARD_SECRETS_KEY),
    config.DASHBOARD_SECRETS_PREVIOUS_KEYS,
    { previousKeysSetting: PREVIOUS_KEYS_SETTING },
  );
}

/**
 * The accounts' API keys at rest (ADR 0603): sealed under DASHBOARD_SECRETS_KEY through the key
 * ring of `@meridian/webhooks` (ADR 0424), opened under it or any of
 * DASHBOARD_SECRETS_PREVIOUS_KEYS; values sealed before the ring (`v1`, no key id) still open.
 * A value the ring cannot open is logged, counted (`dashboard_secret_open_failures_total`) and
 * answered 503 `secret_unavailable`, never a 500: the key may come back (a rotation done out of
 * order), and the value is left as it is.
 */
@Injectable()
export class AccountSecrets {
  readonly ring: SecretKeyRing;
  private readonly refused: Counter<'reason'>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    registry: Registry,
  ) {
    this.ring = dashboardKeyRing(config);
    this.refused =
      (registry.getSingleMetric('dashboard_secret_open_failures_total') as
        Counter<'reason'> | undefined) ??
      new Counter({
        name: 'dashboard_secret_open_failures_total',
        help: "Sealed accounts' API keys the key ring could not open (unknown_key, not_opened, malformed)",
        labelNames: ['reason'],
        registers: [registry],
      });
  }

  seal(apiKey: string): string {
    return this.ring.seal(apiKey);
  }

  /** The user's API key in clear; `userId` only names it in the log. */
  open(userId: string, sealed: string): string {
    try {
      return this.ring.open(sealed);
    } catch (error) {
      if (!isSealedSecretError(error)) throw error;
      this.refused.inc({ reason: error.reason });
      this.logger.error(
        { userId, reason: error.reason, keyId: error.keyId, err: error.message },
        "account's API key cannot be opened",
      );
      throw new DomainError(
        'secret_unavailable',
        'unavailable',
        "this account's API key cannot be read by this deployment now; try again later",
        { retryable: true, cause: error },
      );
    }
  }
}
