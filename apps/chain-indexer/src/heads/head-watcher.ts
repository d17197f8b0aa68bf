import { webSocket } from 'viem';

export interface HeadWatcherEvents {
  onConnected?: (connected: boolean) => void;
  onError?: (error: unknown) => void;
}

/**
 * Wakes the follower when a new head arrives: a WebSocket `newHeads` subscription while the
 * socket is up; while it is down, `wait` falls back to polling every `pollMs` (the follower
 * then asks the node for its block number) and the socket is reconnected every `reconnectMs`.
 * Even with a live socket `wait` returns after `safetyPollMs`, so a socket that stays open but
 * goes silent cannot stall the network.
 */
export class HeadWatcher {
  private connected = false;
  private stopped = false;
  private wake: (() => void) | undefined;
  private pending = false;
  private close: (() => void) | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private attempt = 0;

  constructor(
    private readonly wsUrl: string | undefined,
    private readonly options: { pollMs: number; safetyPollMs: number; reconnectMs: number },
    private readonly events: HeadWatcherEvents = {},
  ) {}

  get isConnected(): boolean {
    return this.connected;
  }

  start(): void {
    if (this.wsUrl) void this.connect();
  }

  /** Resolves on the next head notification or after the current poll interval. */
  wait(maxMs = Number.POSITIVE_INFINITY): Promise<void> {
    if (this.pending || this.stopped) {
      this.pending = false;
      return Promise.resolve();
    }
    const ms = Math.min(maxMs, this.connected ? this.options.safetyPollMs : this.options.pollMs);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        this.pending = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    this.close?.();
    this.wake?.();
  }

  private notify(): void {
    if (this.wake) this.wake();
    else this.pending = true;
  }

  private setConnected(value: boolean): void {
    if (this.connected === value) return;
    this.connected = value;
    this.events.onConnected?.(value);
    // The interval just changed (safety ↔ polling): let the waiter re-arm with the new one.
    this.notify();
  }

  private async connect(): Promise<void> {
    if (this.stopped || !this.wsUrl) return;
    try {
      await this.subscribe(this.wsUrl);
    } catch (error) {
      // Never an unhandled rejection: a socket that cannot even be set up is polled around.
      this.events.onError?.(error);
      if (!this.stopped)
        this.reconnectTimer = setTimeout(() => void this.connect(), this.options.reconnectMs);
    }
  }

  private async subscribe(wsUrl: string): Promise<void> {
    // A fresh key per attempt: viem caches sockets by key, and a closed one must not be reused.
    const transport = webSocket(wsUrl, {
      key: `head-watcher-${++this.attempt}`,
      reconnect: false,
      keepAlive: { interval: 5_000 },
      retryCount: 0,
    })({});
    let closed = false;
    const dropped = (error: unknown) => {
      if (closed) return;
      closed = true;
      this.close = undefined;
      if (!this.stopped) this.events.onError?.(error);
      this.setConnected(false);
      void transport.value
        ?.getRpcClient()
        .then((c) => c.close())
        .catch(() => undefined);
      if (!this.stopped)
        this.reconnectTimer = setTimeout(() => void this.connect(), this.options.reconnectMs);
    };
    try {
      const subscription = await transport.value!.subscribe({
        params: ['newHeads'],
        onData: () => this.notify(),
        onError: dropped,
      });
      this.close = () => {
        closed = true;
        void subscription.unsubscribe().catch(() => undefined);
        void transport.value
          ?.getRpcClient()
          .then((c) => c.close())
          .catch(() => undefined);
      };
      if (this.stopped) this.close();
      else this.setConnected(true);
    } catch (error) {
      dropped(error);
    }
  }
}
