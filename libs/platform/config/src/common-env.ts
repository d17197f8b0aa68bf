import { z } from 'zod';
import { holdsPlaceholder, PLACEHOLDER_MARK } from './secret-setting';
import {
  natsUrlCredentialsAreReal,
  natsUrlPlaceholderMessage,
  transportEnv,
} from './transport-settings';

const url = (protocols: string[]) =>
  z.string().refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    `must be a URL with scheme ${protocols.join(' or ')}`,
  );

function passwordOf(value: string): string {
  try {
    return decodeURIComponent(new URL(value).password);
  } catch {
    return '';
  }
}

export const port = z.coerce.number().int().min(0).max(65_535);

/** Variables every app reads. Apps extend this with their own. */
export const commonEnv = {
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  HTTP_HOST: z.string().default('0.0.0.0'),
  HTTP_PORT: port,
  /**
   * One info line per HTTP request: a REST app's access log (platform-http `createHttpApp`:
   * method, route template, status, ms, request id); rpc-gateway's request log, one line per
   * HTTP request and WebSocket message (its `RequestLog`). `false` turns it off; the request
   * metrics stay.
   */
  REQUEST_LOGS: z
    .enum(['true', 'false'])
    .default('true')
    .transform((value) => value === 'true'),
  /**
   * Its password is a secret: a placeholder there (`postgres://app:CHANGE-ME@…`, as the example
   * Secrets ship it) is refused like any `secretSetting`. Only the password: host and database
   * names are no secrets.
   */
  DATABASE_URL: url(['postgres:', 'postgresql:']).refine(
    (value) => !holdsPlaceholder(passwordOf(value)),
    `its password holds the placeholder ${PLACEHOLDER_MARK}; set a secret of your own`,
  ),
  /**
   * `nats://` or `tls://` (TLS required). A user and password (`nats://user:pass@host`) or a
   * token (`nats://token@host`) in it are sent as such (nats.js itself ignores them in a URL);
   * a placeholder there is refused like DATABASE_URL's. More in `transportEnv` (ADR 0506).
   */
  NATS_URL: url(['nats:', 'tls:'])
    .refine(natsUrlCredentialsAreReal, natsUrlPlaceholderMessage)
    .default('nats://127.0.0.1:4222'),
  /** Prefix applied to every subject, stream, consumer and KV bucket (test isolation, multi-tenant brokers). */
  NATS_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9_-]*$/, 'letters, digits, _ and - only')
    .default(''),
  ...transportEnv,
};

export const urlOf = url;
