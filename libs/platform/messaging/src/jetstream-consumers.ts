import type { ConsumerDeclaration } from '@meridian/contracts';
import type { ReadinessRegistry } from '@meridian/platform-observability';
import type { z } from 'zod';
import { ConsumerRunner, type ConsumerHandler, type ConsumerRunnerDeps } from './consumer-runner';
import { KvMirror } from './kv-mirror';

/**
 * The app's consumers and KV mirrors. Apps call `run()` / `mirror()` from a provider's
 * `onApplicationBootstrap` (or constructor); each registers a readiness check
 * (`consumer:<durable>`, `kv:<bucket>`), starts in the background, and is stopped — in-flight
 * handlers drained — before the NATS connection closes at shutdown.
 */
/** A consumer runner started and stopped by its caller (`JetStreamConsumers.standby`). */
export interface StandbyRunner {
  readonly declaration: ConsumerDeclaration;
  start(): void;
  /** Stops pulling and waits for in-flight handlers to settle. */
  stop(): Promise<void>;
}

export class JetStreamConsumers {
  private readonly runners = new Map<string, ConsumerRunner>();
  private readonly mirrors: KvMirror<z.ZodType>[] = [];
  private readonly standbys = new Set<ConsumerRunner>();

  constructor(
    private readonly deps: ConsumerRunnerDeps,
    private readonly readiness?: ReadinessRegistry,
  ) {}

  run(declaration: ConsumerDeclaration, handler: ConsumerHandler): ConsumerRunner {
    if (this.runners.has(declaration.durable))
      throw new Error(`consumer ${declaration.durable} is already running`);
    const runner = new ConsumerRunner(declaration, handler, this.deps);
    this.runners.set(declaration.durable, runner);
    this.readiness?.register(`consumer:${declaration.durable}`, () => runner.check());
    runner.start();
    return runner;
  }

  /**
   * A runner its caller starts and stops (a replica standing in for another replica's durable:
   * billing-ledger's partition take-over, ADR 0105 step 3). Not a readiness check of this app;
   * stopped with the others at shutdown if still running.
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
    this.readiness?.register(`kv:${bucket}`, () => mirror.check());
    mirror.start();
    return mirror;
  }

  /** Stops pulling everywhere and waits for in-flight handlers. */
  async stopAll(): Promise<void> {
    await Promise.all([
      ...[...this.runners.values(), ...this.standbys].map((r) => r.stop()),
      ...this.mirrors.map((m) => m.stop()),
    ]);
  }
}
