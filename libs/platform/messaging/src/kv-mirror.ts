import { Kvm, type KV } from '@nats-io/kv';
import type { KvWatchEntry } from '@nats-io/kv';
import type { z } from 'zod';
import type { NatsClient, NatsClientLogger } from './nats-client';
import type { NatsNamespace } from './nats-namespace';

export interface KvMirrorOptions<S extends z.ZodType> {
  /** Unprefixed bucket name (KvBuckets.*.name). */
  bucket: string;
  schema: S;
  logger?: NatsClientLogger;
  retryDelayMs?: number;
  /** Called after every applied change (tests, metrics). */
  onChange?: (key: string, value: z.output<S> | undefined) => void;
}

/**
 * An in-memory copy of a KV bucket for the hot path: `get(key)` is a Map lookup. Starts by
 * loading the current value of every key (the initial snapshot; `initialized` resolves after
 * it), then applies puts and deletes as they happen. While NATS is down the Map keeps its last
 * state; the watch restarts when it ends. Values failing the schema are skipped and logged
 * (they don't replace a good value).
 */
export class KvMirror<S extends z.ZodType> {
  private readonly values = new Map<string, z.output<S>>();
  private watcher: Awaited<ReturnType<KV['watch']>> | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private resolveInitialized!: () => void;
  private isInitialized = false;
  /** Resolves once the initial snapshot is in the Map. */
  readonly initialized: Promise<void>;

  constructor(
    private readonly client: NatsClient,
    private readonly namespace: NatsNamespace,
    private readonly options: KvMirrorOptions<S>,
  ) {
    this.initialized = new Promise((resolve) => {
      this.resolveInitialized = () => {
        this.isInitialized = true;
        resolve();
      };
    });
  }

  start(): void {
    this.loop ??= this.run();
  }

  get(key: string): z.output<S> | undefined {
    return this.values.get(key);
  }

  has(key: string): boolean {
    return this.values.has(key);
  }

  get size(): number {
    return this.values.size;
  }

  entries(): IterableIterator<[string, z.output<S>]> {
    return this.values.entries();
  }

  /** Unprefixed bucket name. */
  get bucket(): string {
    return this.options.bucket;
  }

  /** Whether the initial snapshot is in memory (`messaging_kv_mirror_loaded`). */
  get loaded(): boolean {
    return this.isInitialized;
  }

  /** Fails until the initial snapshot has loaded (`initialized`). */
  async check(): Promise<void> {
    if (!this.isInitialized) throw new Error(`kv ${this.options.bucket}: snapshot not loaded`);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.retryTimer);
    this.wake?.();
    this.watcher?.stop();
    await this.loop;
  }

  private async run(): Promise<void> {
    await Promise.race([
      this.client.connection(),
      new Promise<void>((resolve) => (this.wake = resolve)),
    ]);
    while (!this.stopping) {
      try {
        const kv = await new Kvm(this.client.jetstream()).open(
          this.namespace.bucket(this.options.bucket),
        );
        await this.watch(kv);
      } catch (error) {
        this.options.logger?.warn(
          {
            bucket: this.options.bucket,
            err: error instanceof Error ? error.message : String(error),
          },
          'kv watch failed; retrying',
        );
      }
      if (!this.stopping) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          this.retryTimer = setTimeout(resolve, this.options.retryDelayMs ?? 2_000);
        });
      }
    }
  }

  private async watch(kv: KV): Promise<void> {
    // An empty bucket yields no snapshot entries at all, so the snapshot is complete at once.
    const status = await kv.status();
    const seen = new Set<string>();
    this.watcher = await kv.watch();
    // A stop that came while the bucket or the watch was being opened found no watcher to stop.
    if (this.stopping) this.watcher.stop();
    if (status.values === 0) this.finishSnapshot(seen);
    for await (const entry of this.watcher) {
      if (!this.isInitialized || !entry.isUpdate) seen.add(entry.key);
      this.apply(entry);
      if (!this.isInitialized && (entry.isUpdate || entry.delta === 0)) this.finishSnapshot(seen);
    }
  }

  private finishSnapshot(seen: Set<string>): void {
    // After a re-watch (reconnect), keys deleted meanwhile are not in the new snapshot.
    if (this.isInitialized) return;
    for (const key of [...this.values.keys()]) if (!seen.has(key)) this.values.delete(key);
    this.resolveInitialized();
  }

  private apply(entry: KvWatchEntry): void {
    if (entry.operation !== 'PUT') {
      this.values.delete(entry.key);
      this.options.onChange?.(entry.key, undefined);
      return;
    }
    let json: unknown;
    try {
      json = entry.json();
    } catch {
      this.options.logger?.warn(
        { bucket: this.options.bucket, key: entry.key },
        'kv value is not JSON; skipped',
      );
      return;
    }
    const parsed = this.options.schema.safeParse(json);
    if (!parsed.success) {
      this.options.logger?.warn(
        { bucket: this.options.bucket, key: entry.key },
        'kv value fails its schema; skipped',
      );
      return;
    }
    this.values.set(entry.key, parsed.data);
    this.options.onChange?.(entry.key, parsed.data);
  }
}
