import { Inject, Injectable } from '@nestjs/common';
import { LOGGER } from '@meridian/platform-observability';
import { parseSecretsKey, SealedSecretOpener, SecretKeyRing } from '@meridian/platform-secrets';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
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
 * ring of `@meridian/platform-secrets` (ADR 0424), opened under it or any of
 * DASHBOARD_SECRETS_PREVIOUS_KEYS; values sealed before the ring (`v1`, no key id) still open.
 * A value the ring cannot open is logged, counted (`dashboard_secret_open_failures_total`) and
 * answered 503 `secret_unavailable`, never a 500: the key may come back (a rotation done out of
 * order), and the value is left as it is. `open(userId, sealed)`: the user only names it in
 * the log.
 */
@Injectable()
export class AccountSecrets extends SealedSecretOpener {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
    registry: Registry,
  ) {
    super(dashboardKeyRing(config), logger, registry, {
      metric: {
        name: 'dashboard_secret_open_failures_total',
        help: "Sealed accounts' API keys the key ring could not open (unknown_key, not_opened, malformed)",
      },
      subjectField: 'userId',
      logMessage: "account's API key cannot be opened",
      unavailableMessage:
        "this account's API key cannot be read by this deployment now; try again later",
    });
  }
}
