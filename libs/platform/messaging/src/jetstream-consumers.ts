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
export class JetStreamConsumers {
  private readonly runners = new Map<string, ConsumerRunner>();
  private readonly mirrors: KvMirror<z.ZodType>[] = [];

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
      ...[...this.runners.values()].map((r) => r.stop()),
      ...this.mirrors.map((m) => m.stop()),
    ]);
  }
}
