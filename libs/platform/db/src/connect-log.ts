import { redactUrls } from '@meridian/platform-observability';
import type { Logger } from 'pino';

/**
 * DATABASE_URL as it may be logged: scheme, user, host, port and database; never the password
 * nor the query (sslpassword, key files).
 */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username ? `${parsed.username}@` : '';
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

/** Why a connection attempt failed, as the driver says it (message and code), safe to log. */
export interface ConnectCause {
  message: string;
  code?: string;
}

/**
 * The cause of a failed connection: the driver's message and code (`database "x" does not
 * exist` 3D000, `connect ECONNREFUSED 127.0.0.1:5499` ECONNREFUSED, a PostgresTlsError's advice),
 * with the URL's password and every URL's path and credentials taken out. A refusal on a host
 * name with several addresses is an AggregateError with no message of its own: its errors'.
 */
export function connectCauseOf(error: unknown, url: string): ConnectCause {
  const fields = (typeof error === 'object' && error !== null ? error : {}) as {
    message?: unknown;
    code?: unknown;
    errors?: unknown;
  };
  let message = typeof fields.message === 'string' ? fields.message : '';
  if (!message && Array.isArray(fields.errors))
    message = fields.errors
      .map((inner) => (inner as { message?: unknown } | null)?.message)
      .filter((text): text is string => typeof text === 'string' && text !== '')
      .join('; ');
  const code = typeof fields.code === 'string' ? fields.code : undefined;
  if (!message) message = code ?? String(error);
  return { message: withoutPassword(redactUrls(message), url), ...(code ? { code } : {}) };
}

function withoutPassword(text: string, url: string): string {
  let password = '';
  try {
    password = new URL(url).password;
  } catch {
    return text;
  }
  if (!password) return text;
  let result = text;
  for (const spelling of new Set([password, decodeURIComponent(password)]))
    result = result.split(spelling).join('***');
  return result;
}

/**
 * What an app logs of its Postgres connection (DbModule): each distinct cause of failure once,
 * until a connection succeeds (then "Postgres connected" once, and the causes may be logged
 * again), so a wrong DATABASE_URL names itself in the first lines instead of only in /readyz
 * while every query fails with TypeORM's "Driver not Connected".
 */
export class ConnectFailureLog {
  private readonly logged = new Set<string>();

  constructor(
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
    private readonly url: string,
  ) {}

  failed(error: unknown): void {
    const cause = connectCauseOf(error, this.url);
    const key = `${cause.code ?? ''}\n${cause.message}`;
    if (this.logged.has(key)) return;
    this.logged.add(key);
    this.logger.warn(
      { database: redactDatabaseUrl(this.url), cause },
      `Postgres connection failed: ${cause.message}${cause.code ? ` (${cause.code})` : ''}; ` +
        'queries fail, periodic jobs wait, and /readyz answers 503 until it connects (retried at each /readyz)',
    );
  }

  connected(): void {
    if (this.logged.size === 0) return;
    this.logged.clear();
    this.logger.info({ database: redactDatabaseUrl(this.url) }, 'Postgres connected');
  }

  /**
   * A connection the app had is lost (DbJobGate, once per outage, not per failed query): the
   * cause, and what waits meanwhile.
   */
  lost(error: unknown): void {
    const cause = connectCauseOf(error, this.url);
    this.logger.warn(
      { database: redactDatabaseUrl(this.url), cause },
      `Postgres unreachable: ${cause.message}${cause.code ? ` (${cause.code})` : ''}; ` +
        'message consumers hold their messages and periodic jobs wait until it answers (probed with backoff)',
    );
  }

  /** The lost connection answers again (DbJobGate): how long it was away, and why. */
  restored(downMs: number, error: unknown): void {
    const cause = connectCauseOf(error, this.url);
    this.logger.info(
      { database: redactDatabaseUrl(this.url), downMs, cause },
      `Postgres answers again after ${formatDuration(downMs)} (was: ${cause.message}); consumers resume`,
    );
  }
}

/** 850 ms, 12.3 s, 9 min 4 s. */
function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1_000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}
