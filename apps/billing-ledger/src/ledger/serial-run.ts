/**
 * Runs `work` one at a time. A call while a run is going waits for it and then starts its own,
 * so the run a caller awaits began after its call: it covers everything committed before it.
 * (The ledger tick and the hourly fold; a caller that only needs "one is running" would share.)
 */
export class SerialRun {
  private running: Promise<void> | undefined;

  constructor(private readonly work: () => Promise<void>) {}

  async run(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
    this.running = this.work().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Resolves once no run is going (whatever its outcome). */
  async idle(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
  }
}
