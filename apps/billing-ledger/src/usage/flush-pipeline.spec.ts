import { usageFlushId, type UsageFlushedV2 } from '@meridian/contracts';
import type { FlushDelivery, FlushOutcome } from '../ledger/ledger.service';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { flushPart, type FlushAggregate } from './flush-aggregate';
import { FlushPipeline } from './flush-pipeline';
import { DomainError } from '@meridian/errors';

let seq = 0;
function delivery(accountId: string, cu: number, producerId = 'gw-1'): FlushDelivery {
  const windowStart = new Date(Date.UTC(2026, 0, 1, 0, 0, seq++)).toISOString();
  const flush: UsageFlushedV2 = {
    id: usageFlushId(producerId, windowStart, 0),
    producerId,
    windowStart,
    windowEnd: windowStart,
    part: 0,
    parts: 1,
    lines: [{ kind: 'node', network: 'eth-mainnet', method: 'eth_call' }],
    accounts: [accountId],
    usage: [0, 0, 1, cu],
    totalCu: cu,
  };
  return { part: flushPart(flush), streamSequence: seq, deliveryCount: 1 };
}

/** What the consumer does: the part's body summed now, the delivery kept for the commit. */
const submit = (pipeline: FlushPipeline, d: FlushDelivery) => pipeline.submit(d, d.part.body());

const applied = (): FlushOutcome => ({ status: 'applied', parked: 0 });
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('FlushPipeline', () => {
  it('sums the parts that arrive while a transaction runs into the next one, one transaction at a time', async () => {
    const batches: Array<{ ids: string[]; aggregate: FlushAggregate }> = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let running = 0;
    let peak = 0;
    const pipeline = new FlushPipeline(async (deliveries, aggregate) => {
      running += 1;
      peak = Math.max(peak, running);
      batches.push({ ids: deliveries.map((d) => d.part.id), aggregate: aggregate! });
      if (batches.length === 1) await gate;
      running -= 1;
      return deliveries.map(applied);
    });
    const first = submit(pipeline, delivery('a', 10));
    await turn();
    // The first transaction runs; these three wait, already summed.
    const later = [delivery('a', 20), delivery('b', 30), delivery('a', 40)];
    const outcomes = later.map((d) => submit(pipeline, d));
    expect(pipeline.pending).toBe(3);
    release();
    await Promise.all([first, ...outcomes]);
    expect(batches.map((b) => b.ids.length)).toEqual([1, 3]);
    expect(peak).toBe(1);
    expect(batches[1]!.aggregate.charges).toEqual([
      expect.objectContaining({ accountId: 'a', totalCu: 60 }),
      expect.objectContaining({ accountId: 'b', totalCu: 30 }),
    ]);
    expect(batches[1]!.aggregate.parts.map((p) => p.id)).toEqual(later.map((d) => d.part.id));
  });

  it('sums a copy of a part that arrives in the same batch once, and answers both callers', async () => {
    const aggregates: FlushAggregate[] = [];
    const pipeline = new FlushPipeline(async (deliveries, aggregate) => {
      aggregates.push(aggregate!);
      return deliveries.map((_, i): FlushOutcome => ({
        status: i === 0 ? 'applied' : 'duplicate',
        parked: 0,
      }));
    });
    const part = delivery('a', 25);
    const outcomes = await Promise.all([
      submit(pipeline, part),
      submit(pipeline, { ...part, deliveryCount: 2 }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['applied', 'duplicate']);
    expect(aggregates).toHaveLength(1);
    expect(aggregates[0]!.charges).toEqual([
      expect.objectContaining({ accountId: 'a', totalCu: 25 }),
    ]);
    expect(aggregates[0]!.parts).toHaveLength(1);
  });

  it('fails every caller of a failed transaction and applies later parts as usual', async () => {
    let fail = true;
    const pipeline = new FlushPipeline(async (deliveries) => {
      if (fail) throw new Error('could not serialize access');
      return deliveries.map(applied);
    });
    const results = await Promise.allSettled([
      submit(pipeline, delivery('a', 10)),
      submit(pipeline, delivery('b', 10)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await expect(submit(pipeline, delivery('a', 10))).resolves.toEqual(applied());
    expect(pipeline.pending).toBe(0);
  });

  it('isolates a part Postgres cannot store: its batch-mates commit at once, it alone is refused for good', async () => {
    // A time Postgres has not, as its driver reports it (SQLSTATE 22008: datetime field overflow).
    const overflow = Object.assign(new Error('date/time field value out of range'), {
      code: '22008',
    });
    const attempts: string[][] = [];
    const pipeline = new FlushPipeline(async (deliveries, aggregate) => {
      attempts.push(deliveries.map((d) => d.part.id));
      // The first attempt comes summed; a half being isolated is summed by the apply itself.
      expect(aggregate === undefined).toBe(attempts.length > 1);
      if (deliveries.some((d) => d.part.totalCu === 13)) throw overflow;
      return deliveries.map(applied);
    });
    const parts = [10, 20, 13, 30, 40].map((cu, i) => delivery(`acc_${i}`, cu));
    const results = await Promise.allSettled(parts.map((d) => submit(pipeline, d)));
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    const refused = (results[2] as PromiseRejectedResult).reason as DomainError;
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'unappliable_usage', kind: 'invalid', retryable: false });
    expect(refused.message).toMatch(/date\/time field value out of range/);
    // The batch; its first half (3 parts) fails, so its halves: 2 (commit) and 1 (refused); then
    // the batch's second half (2) commits.
    expect(attempts.map((a) => a.length)).toEqual([5, 3, 2, 1, 2]);
  });

  it('fails a whole batch without isolating when the failure is not of its data (a lost connection, a conflict)', async () => {
    for (const error of [
      Object.assign(new Error('terminating connection'), { code: '57P01' }),
      Object.assign(new Error('could not serialize access'), { code: '40001' }),
      new Error('Connection terminated unexpectedly'),
    ]) {
      let attempts = 0;
      const pipeline = new FlushPipeline(async () => {
        attempts += 1;
        throw error;
      });
      const results = await Promise.allSettled(
        [1, 2, 3].map((cu) => submit(pipeline, delivery('a', cu))),
      );
      expect(results.map((r) => r.status === 'rejected' && r.reason === error)).toEqual([
        true,
        true,
        true,
      ]);
      expect(attempts).toBe(1);
    }
  });

  it('keeps a part sent as bytes, not its decoded body, until the commit (the body dies young)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batches: FlushAggregate[] = [];
    const pipeline = new FlushPipeline(async (deliveries, aggregate) => {
      batches.push(aggregate!);
      await gate;
      return deliveries.map(applied);
    });
    // As the consumer hands a part over: decoded from the message, the bytes kept with it.
    const sent = delivery('a', 70).part.body();
    const bytes = new TextEncoder().encode(JSON.stringify(sent));
    let body: UsageFlushedV2 | undefined = JSON.parse(new TextDecoder().decode(bytes));
    const alive = new WeakRef(body!);
    const outcome = submit(pipeline, {
      part: flushPart(body!, bytes),
      streamSequence: 9,
      deliveryCount: 1,
    });
    body = undefined;
    await turn();
    gc();
    expect(alive.deref()).toBeUndefined();
    // Still summed, and its body can be had again from the bytes (a re-sum, parking).
    expect(batches[0]!.charges).toEqual([expect.objectContaining({ accountId: 'a', totalCu: 70 })]);
    expect(batches[0]!.parts[0]!.body()).toEqual(sent);
    expect(batches[0]!.parts[0]).toMatchObject({ id: sent.id, accounts: 1, totalCu: 70 });
    release();
    await expect(outcome).resolves.toEqual(applied());
  });
});
