/** A named dependency check; throws (or rejects) when the dependency is not usable. */
export type ReadinessCheck = () => Promise<void>;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, 'ok' | string>;
  failing: string[];
}

/**
 * Dependencies (Postgres schema, NATS, upstream pools…) register a check here; `/readyz`
 * runs them all with a timeout and names the failing ones.
 */
export class ReadinessRegistry {
  private readonly checks = new Map<string, ReadinessCheck>();

  constructor(private readonly timeoutMs = 2_000) {}

  register(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  async report(): Promise<ReadinessReport> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]) => [name, await this.run(check)] as const),
    );
    const checks = Object.fromEntries(entries);
    const failing = entries.filter(([, result]) => result !== 'ok').map(([name]) => name);
    return { ready: failing.length === 0, checks, failing };
  }

  private async run(check: ReadinessCheck): Promise<'ok' | string> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        check(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`timed out after ${this.timeoutMs} ms`)),
            this.timeoutMs,
          );
        }),
      ]);
      return 'ok';
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    } finally {
      clearTimeout(timer);
    }
  }
}
