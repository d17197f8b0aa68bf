import type { ConsumerDeclaration } from '@meridian/contracts';
import { Gauge, type Registry } from 'prom-client';
import type { z } from 'zod';
import { ConsumerRunner, type ConsumerHandler, type ConsumerRunnerDeps } from './consumer-runner';
import { KvMirror } from './kv-mirror';

/** A consumer runner started and stopped by its caller (`JetStreamConsumers.standby`). */
export interface StandbyRunner {
  readonly declaration: ConsumerDeclaration;
  start(): void;
  /** Stops pulling and waits for in-flight handlers to settle. */
  stop(): Promise<void>;
}

/**
 * The app's consumers and KV mirrors. Apps call `run()` / `mirror()` from a provider's
 * `onApplicationBootstrap` (or constructor); each starts in the background, and is stopped —
 * in-flight handlers drained — before the NATS connection closes at shutdown. None is part of
 * `/readyz` (ADR 0212 amendment): a detached consumer shows as `messaging_consumer_attached` 0
 * (read at scrape), which an alert reads; the runner keeps re-attaching on its own.
 */
export class JetStreamConsumers {
  private readonly runners = new Map<string, ConsumerRunner>();
  private readonly mirrors: KvMirror<z.ZodType>[] = [];
  private readonly standbys = new Set<ConsumerRunner>();
  private stopped = false;

  constructor(
    private readonly deps: ConsumerRunnerDeps,
    registry?: Registry,
  ) {
    if (!registry) return;
    const runners = this.runners;
    const mirrors = this.mirrors;
    new Gauge({
      name: 'messaging_consumer_attached',
      help: "1 while this process's durable consumer is attached and pulling; 0 while it is not (NATS down, consumer missing, not permitted)",
      labelNames: ['consumer'],
      // A multi-process replica (rpc-gateway) is attached when all its processes are.
      aggregator: 'min',
      registers: [registry],
      collect() {
        for (const [durable, runner] of runners)
          this.set({ consumer: durable }, runner.ready ? 1 : 0);
      },
    });
    new Gauge({
      name: 'messaging_kv_mirror_loaded',
      help: "1 once this process's in-memory copy of the KV bucket has its initial snapshot (it keeps its last state while NATS is down)",
      labelNames: ['bucket'],
      aggregator: 'min',
      registers: [registry],
      collect() {
        // Two mirrors of one bucket (two features of the app) are loaded when both are.
        const loaded = new Map<string, boolean>();
        for (const m of mirrors) loaded.set(m.bucket, (loaded.get(m.bucket) ?? true) && m.loaded);
        for (const [bucket, yes] of loaded) this.set({ bucket }, yes ? 1 : 0);
      },
    });
  }

  run(declaration: ConsumerDeclaration, handler: ConsumerHandler): ConsumerRunner {
    if (this.runners.has(declaration.durable))
      throw new Error(`consumer ${declaration.durable} is already running`);
    const runner = new ConsumerRunner(declaration, handler, this.deps);
    this.runners.set(declaration.durable, runner);
    // One asked for while the app shuts down (started once something loaded) is never started.
    if (!this.stopped) runner.start();
    return runner;
  }

  /**
   * A runner its caller starts and stops (a replica standing in for another replica's durable:
   * billing-ledger's partition take-over, ADR 0105 step 3). Not in `messaging_consumer_attached`
   * (it is meant to be stopped most of the time); stopped with the others at shutdown if still
   * running.
   */
  standby(declaration: ConsumerDeclaration, handler: ConsumerHandler): StandbyRunner {
    const runner = new ConsumerRunner(declaration, handler, this.deps);
    return {
      declaration,
      start: () => {
        this.standbys.add(runner);
        runner.start();
      },
      stop: async () => {
        await runner.stop();
        this.standbys.delete(runner);
      },
    };
  }

  /** `onChange` sees every applied put (value) and delete (undefined), snapshot included. */
  mirror<S extends z.ZodType>(
    bucket: string,
    schema: S,
    onChange?: (key: string, value: z.output<S> | undefined) => void,
  ): KvMirror<S> {
    const mirror = new KvMirror(this.deps.client, this.deps.namespace, {
      bucket,
      schema,
      logger: this.deps.logger,
      onChange,
    });
    this.mirrors.push(mirror as unknown as KvMirror<z.ZodType>);
    mirror.start();
    return mirror;
  }

  /**
   * Every consumer attached and every mirror's snapshot loaded (what the two gauges say), for
   * tests that wait until the app works rather than only serves.
   */
  attached(): boolean {
    return [...this.runners.values()].every((r) => r.ready) && this.mirrors.every((m) => m.loaded);
  }

  /** Stops pulling everywhere and waits for in-flight handlers. */
  async stopAll(): Promise<void> {
    this.stopped = true;
    await Promise.all([
      ...[...this.runners.values(), ...this.standbys].map((r) => r.stop()),
      ...this.mirrors.map((m) => m.stop()),
    ]);
  }
}
