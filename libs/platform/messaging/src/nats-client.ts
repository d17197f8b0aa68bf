import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { DomainError } from '@meridian/errors';
import { urlOrigin } from '@meridian/platform-observability';
import { natsConnectOptions, type NatsConnectionSettings } from './nats-connect-options';
import { natsInboxPrefix } from './nats-permissions';

/** `url` and the credential and TLS files (`natsSettingsOf(config)` of @meridian/platform-config). */
export interface NatsClientOptions extends NatsConnectionSettings {
  /** Connection name shown by the server (the app name). */
  name: string;
  /** Wait between first-connect attempts while the server is down. */
  retryDelayMs?: number;
}

export interface NatsClientLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

const silent: NatsClientLogger = { info: () => undefined, warn: () => undefined };

/**
 * The app's one NATS connection, opened in the background: app start never waits for NATS, so
 * /healthz and /readyz answer while the server is down (`nats_connected` reports it, NatsProbe).
 * Once connected the client reconnects forever on its own. Code that needs the connection either awaits
 * `connection()` (consumers, KV mirrors) or calls `current()` and fails fast with a retryable
 * `messaging_unavailable` DomainError (publishers on a request path).
 */
export class NatsClient {
  private nc: NatsConnection | undefined;
  private js: JetStreamClient | undefined;
  private readonly connected: Promise<NatsConnection>;
  private resolveConnected!: (nc: NatsConnection) => void;
  private started = false;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private lastError: string | undefined;
  /** Between a `disconnect` status and the `reconnect` after it. */
  private away = false;

  constructor(
    private readonly options: NatsClientOptions,
    private readonly logger: NatsClientLogger = silent,
  ) {
    this.connected = new Promise((resolve) => {
      this.resolveConnected = resolve;
    });
    // A connection that never comes must not make `await connection()` callers hang shutdown
    // with an unhandled rejection; they simply never resume.
  }

  /** Starts connecting in the background (idempotent). */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    void this.attempt();
  }

  /** Resolves once connected (never rejects; pending forever after close without a connection). */
  connection(): Promise<NatsConnection> {
    this.start();
    return this.connected;
  }

  current(): NatsConnection | undefined {
    return this.nc && !this.nc.isClosed() ? this.nc : undefined;
  }

  /**
   * Whether the connection is up right now (not closed, not between a disconnect and its
   * reconnect). A request path that would only wait for a timeout while NATS is away asks this
   * first and leaves the work to its retry (webhook-matcher's status tick).
   */
  connectedNow(): boolean {
    return this.current() !== undefined && !this.away;
  }

  /** The connection or a retryable DomainError, for callers that must not wait. */
  require(): NatsConnection {
    const nc = this.current();
    if (!nc) {
      throw new DomainError('messaging_unavailable', 'unavailable', 'NATS is not connected', {
        details: { lastError: this.lastError },
      });
    }
    return nc;
  }

  jetstream(): JetStreamClient {
    const nc = this.require();
    this.js ??= jetstream(nc);
    return this.js;
  }

  /**
   * Without the client's `$JS.API.INFO` round trip up front (`checkAPI`): an app's NATS user
   * may lack that grant (ADR 0507: delivery-worker's queue depth, read at every /metrics scrape,
   * was refused there with a permissions violation each time).
   */
  async jetstreamManager(): Promise<JetStreamManager> {
    return jetstreamManager(await this.connection(), { checkAPI: false });
  }

  /** Throws while disconnected, otherwise round-trips a PING (NatsProbe: `nats_connected`). */
  async check(): Promise<void> {
    const nc = this.current();
    if (!nc) throw new Error(this.lastError ? `not connected: ${this.lastError}` : 'not connected');
    await nc.flush();
  }

  /** Drains the connection (in-flight subscriptions finish) and stops reconnecting. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const nc = this.nc;
    if (nc && !nc.isClosed()) await nc.drain().catch(() => nc.close());
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') this.away = true;
      else if (status.type === 'reconnect') this.away = false;
    }
  }

  private async attempt(): Promise<void> {
    if (this.closed) return;
    try {
      // First connect is retried here, not by the client (waitOnFirstConnect would keep timers
      // we can't cancel on shutdown); after it, the client reconnects forever by itself.
      // noAsyncTraces: without it every request (publish → PubAck, ackAck, KV put) captures an
      // Error with a stack up front, to point a later timeout at its caller; that was ~13 % of
      // billing-ledger's CPU. Timeouts still reject with TimeoutError/RequestError, only their
      // stack ends in the client's timer instead of our call site (the error message and our
      // DomainError wrapping say which subject failed).
      const nc = await connect({
        ...natsConnectOptions(this.options),
        name: this.options.name,
        // Replies to this connection only (ADR 0507): its NATS user may subscribe to its own.
        inboxPrefix: natsInboxPrefix(this.options.name),
        maxReconnectAttempts: -1,
        timeout: 2_000,
        noAsyncTraces: true,
      });
      if (this.closed) {
        await nc.close();
        return;
      }
      this.nc = nc;
      this.lastError = undefined;
      this.logger.info({ server: nc.getServer() }, 'nats connected');
      void nc.closed().then((error) => {
        if (error) this.lastError = error.message;
      });
      void this.watchStatus(nc);
      this.resolveConnected(nc);
    } catch (error) {
      this.lastError = error instanceof Error ? error.message : String(error);
      // Closed while this attempt was under way: no more attempts.
      if (this.closed) return;
      this.logger.warn(
        { err: this.lastError, server: urlOrigin(this.options.url) },
        'nats not reachable; retrying',
      );
      this.retryTimer = setTimeout(() => void this.attempt(), this.options.retryDelayMs ?? 2_000);
    }
  }
}
