import type { AnswerBudget } from './answer-budget';
import type { CallAnswer, OutCall } from './upstream-router';

/**
 * Sends one upstream exchange (a single call, or a batch) and resolves to one answer per call,
 * in the order given. Reports failures as answers; a rejection is passed on to every caller.
 */
export type ExchangeCalls = (
  calls: readonly OutCall[],
  budgets: readonly AnswerBudget[],
) => Promise<CallAnswer[]>;

interface Waiter {
  /** Where the submission's calls start in the exchange. */
  readonly start: number;
  readonly count: number;
  resolve(answers: CallAnswer[]): void;
  reject(error: unknown): void;
}

/**
 * Joins the calls that one network's clients submit during one event-loop turn into one upstream
 * exchange, sent when the turn ends (`setImmediate`, no timer) or as soon as `maxCalls` calls are
 * waiting: one HTTP exchange per call was a large share of the gateway's CPU per call (ADR 0205).
 * A submission's calls are never split: a client batch is still answered by one node, as before,
 * and one of `maxCalls` calls or more is sent at once on its own. Callers decide which calls may
 * be submitted (`mayCoalesce` in @meridian/networks).
 */
export class CallCoalescer {
  private calls: OutCall[] = [];
  /** Per call: what its client request may still receive (ADR 0215). */
  private budgets: AnswerBudget[] = [];
  private waiters: Waiter[] = [];
  private flushScheduled = false;

  constructor(
    private readonly exchange: ExchangeCalls,
    private readonly maxCalls: number,
    /** Called with the number of calls of every exchange this sends. */
    private readonly observeSize: (calls: number) => void,
  ) {}

  /** Resolves to exactly the answers to `calls`, in their order. */
  submit(calls: readonly OutCall[], budget: AnswerBudget): Promise<CallAnswer[]> {
    if (calls.length >= this.maxCalls) {
      this.observeSize(calls.length);
      return this.exchange(
        calls,
        calls.map(() => budget),
      );
    }
    if (this.calls.length + calls.length > this.maxCalls) this.flush();
    return new Promise<CallAnswer[]>((resolve, reject) => {
      this.waiters.push({ start: this.calls.length, count: calls.length, resolve, reject });
      for (const call of calls) {
        this.calls.push(call);
        this.budgets.push(budget);
      }
      if (this.calls.length === this.maxCalls) {
        this.flush();
      } else if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(this.endOfTurn);
      }
    });
  }

  private readonly endOfTurn = (): void => {
    this.flushScheduled = false;
    if (this.calls.length > 0) this.flush();
  };

  private flush(): void {
    const calls = this.calls;
    const budgets = this.budgets;
    const waiters = this.waiters;
    this.calls = [];
    this.budgets = [];
    this.waiters = [];
    this.observeSize(calls.length);
    this.exchange(calls, budgets).then(
      (answers) => {
        if (waiters.length === 1) return waiters[0]!.resolve(answers);
        for (const waiter of waiters)
          waiter.resolve(answers.slice(waiter.start, waiter.start + waiter.count));
      },
      (error: unknown) => {
        for (const waiter of waiters) waiter.reject(error);
      },
    );
  }
}
