import type { UsageRecorded } from '@meridian/contracts';
import type { UsageOutcome } from '../ledger/ledger.service';

interface Waiting {
  event: UsageRecorded;
  resolve: (outcome: UsageOutcome) => void;
  reject: (error: unknown) => void;
}

/**
 * Groups usage events that arrive together (the consumer handles many in parallel) into one
 * ledger transaction. Each caller learns its own outcome only after the commit, so a message is
 * acked only once its CU are durable.
 */
export class UsageBatcher {
  private queue: Waiting[] = [];
  private running = false;

  constructor(
    private readonly apply: (events: readonly UsageRecorded[]) => Promise<UsageOutcome[]>,
    private readonly maxBatch = 64,
  ) {}

  submit(event: UsageRecorded): Promise<UsageOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ event, resolve, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const outcomes = await this.apply(batch.map((w) => w.event));
        batch.forEach((w, i) => w.resolve(outcomes[i]!));
      } catch (error) {
        batch.forEach((w) => w.reject(error));
      }
    }
    this.running = false;
  }
}
