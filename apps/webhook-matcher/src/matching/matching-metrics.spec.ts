import type { ChainBlock } from '@meridian/contracts';
import type { JetStreamPublisher } from '@meridian/platform-messaging';
import { FakeClock } from '@meridian/time';
import { Registry } from 'prom-client';
import { DeliveryJobPublisher, type JobRequest } from '../delivery-jobs/delivery-job.publisher';
import { MatchingMetrics, matchLagSeconds, type PublishTally } from './matching-metrics';

const NOW = '2026-11-30T07:00:00.000Z';
const nowSeconds = Date.parse(NOW) / 1000;

function block(over: Partial<ChainBlock> = {}): ChainBlock {
  return {
    id: 'eth-mainnet:0xab:0',
    network: 'eth-mainnet',
    number: 1234,
    hash: `0x${'ab'.repeat(32)}`,
    parentHash: `0x${'cd'.repeat(32)}`,
    timestamp: nowSeconds - 30,
    transactions: [],
    receipts: [],
    part: { index: 0, count: 1 },
    publishedAt: new Date(Date.parse(NOW) - 4_500).toISOString(),
    ...over,
  };
}

/** `name{labels} value` lines of the registry, the default labels left out. */
async function lines(registry: Registry, name: string): Promise<string[]> {
  return (await registry.metrics())
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

describe('matchLagSeconds: from the indexer publishing a block to the end of matching it', () => {
  it.each([
    ['4.5 s after publication', '2026-11-30T06:59:55.500Z', 4.5],
    ['at once', NOW, 0],
    // The indexer's clock a little ahead of ours: nothing is behind.
    ['published "after" now', '2026-11-30T07:00:01.000Z', 0],
    ['an unreadable time', 'not a time', 0],
  ])('%s', (_case, publishedAt, lag) => {
    expect(matchLagSeconds(publishedAt, new Date(NOW))).toBe(lag);
  });
});

describe('MatchingMetrics', () => {
  let registry: Registry;
  let clock: FakeClock;
  let consuming: boolean;
  let metrics: MatchingMetrics;

  beforeEach(() => {
    registry = new Registry();
    clock = new FakeClock(NOW);
    consuming = false;
    metrics = new MatchingMetrics(registry, clock, { index: 1, count: 3 }, () => consuming);
  });

  it('starts the stall clock of every network served at the start, and its failures at 0', async () => {
    metrics.started(['eth-mainnet', 'polygon-mainnet']);
    clock.advance(60_000);
    expect(await lines(registry, 'webhook_matcher_last_step_success_timestamp_seconds')).toEqual([
      `webhook_matcher_last_step_success_timestamp_seconds{network="eth-mainnet"} ${nowSeconds}`,
      `webhook_matcher_last_step_success_timestamp_seconds{network="polygon-mainnet"} ${nowSeconds}`,
    ]);
    expect(await lines(registry, 'webhook_matcher_delivery_job_publish_failures_total')).toEqual([
      'webhook_matcher_delivery_job_publish_failures_total{network="eth-mainnet"} 0',
      'webhook_matcher_delivery_job_publish_failures_total{network="polygon-mainnet"} 0',
    ]);
  });

  it("a block matched: its number, its time, the lag, the step's time; its events counted", async () => {
    metrics.eventsRecorded('eth-mainnet', { matched: 5, rateLimited: 2 });
    metrics.blockMatched(block());
    expect(await lines(registry, 'webhook_matcher_last_block_number')).toEqual([
      'webhook_matcher_last_block_number{network="eth-mainnet"} 1234',
    ]);
    expect(await lines(registry, 'webhook_matcher_last_block_timestamp_seconds')).toEqual([
      `webhook_matcher_last_block_timestamp_seconds{network="eth-mainnet"} ${nowSeconds - 30}`,
    ]);
    expect(await lines(registry, 'webhook_matcher_lag_seconds')).toEqual([
      'webhook_matcher_lag_seconds{network="eth-mainnet"} 4.5',
    ]);
    expect(await lines(registry, 'webhook_matcher_last_step_success_timestamp_seconds')).toEqual([
      `webhook_matcher_last_step_success_timestamp_seconds{network="eth-mainnet"} ${nowSeconds}`,
    ]);
    expect(await lines(registry, 'webhook_matcher_blocks_matched_total')).toEqual([
      'webhook_matcher_blocks_matched_total{network="eth-mainnet"} 1',
    ]);
    expect(await lines(registry, 'webhook_matcher_events_matched_total')).toEqual([
      'webhook_matcher_events_matched_total{network="eth-mainnet"} 5',
    ]);
    expect(await lines(registry, 'webhook_matcher_events_dropped_total')).toEqual([
      'webhook_matcher_events_dropped_total{network="eth-mainnet",reason="rate_limited"} 2',
    ]);
  });

  it('a block in parts counts once, at its last part; the gauges follow every part', async () => {
    metrics.blockMatched(block({ part: { index: 0, count: 2 } }));
    expect(await lines(registry, 'webhook_matcher_blocks_matched_total')).toEqual([]);
    clock.advance(2_000);
    metrics.blockMatched(block({ part: { index: 1, count: 2 } }));
    expect(await lines(registry, 'webhook_matcher_blocks_matched_total')).toEqual([
      'webhook_matcher_blocks_matched_total{network="eth-mainnet"} 1',
    ]);
    expect(await lines(registry, 'webhook_matcher_lag_seconds')).toEqual([
      'webhook_matcher_lag_seconds{network="eth-mainnet"} 6.5',
    ]);
  });

  it('a reorg removal handled moves the step time only', async () => {
    clock.advance(90_000);
    metrics.removalHandled('eth-mainnet');
    expect(await lines(registry, 'webhook_matcher_last_step_success_timestamp_seconds')).toEqual([
      `webhook_matcher_last_step_success_timestamp_seconds{network="eth-mainnet"} ${nowSeconds + 90}`,
    ]);
    expect(await lines(registry, 'webhook_matcher_last_block_number')).toEqual([]);
  });

  it('jobs by outcome, failures apart', async () => {
    metrics.jobsSettled('eth-mainnet', { published: 3, duplicates: 1, failed: 0 });
    metrics.jobsSettled('eth-mainnet', { published: 1, duplicates: 0, failed: 4 });
    expect(await lines(registry, 'webhook_matcher_delivery_jobs_published_total')).toEqual([
      'webhook_matcher_delivery_jobs_published_total{network="eth-mainnet",outcome="published"} 4',
      'webhook_matcher_delivery_jobs_published_total{network="eth-mainnet",outcome="duplicate"} 1',
    ]);
    expect(await lines(registry, 'webhook_matcher_delivery_job_publish_failures_total')).toEqual([
      'webhook_matcher_delivery_job_publish_failures_total{network="eth-mainnet"} 4',
    ]);
  });

  it("the partition gauge reads the consumer's state at each scrape", async () => {
    expect(await lines(registry, 'webhook_matcher_partition_consuming')).toEqual([
      'webhook_matcher_partition_consuming{partition="1/3"} 0',
    ]);
    consuming = true;
    expect(await lines(registry, 'webhook_matcher_partition_consuming')).toEqual([
      'webhook_matcher_partition_consuming{partition="1/3"} 1',
    ]);
  });

  it('says how many partitions there are, so a partition nobody consumes shows', async () => {
    expect(await lines(registry, 'webhook_matcher_partitions')).toEqual([
      'webhook_matcher_partitions 3',
    ]);
  });
});

describe('DeliveryJobPublisher.publishAll: what a batch came to', () => {
  const requests: JobRequest[] = ['a', 'b', 'c', 'd'].map((id) => ({
    webhookId: `wh_${id}`,
    accountId: 'acc_1',
    eventId: `ev_${id}`,
    phase: 'unconfirmed',
    payload: {} as JobRequest['payload'],
  }));

  /** A publisher whose answer per job id is scripted: taken, a duplicate, or refused. */
  function publisher(answers: Record<string, 'ok' | 'duplicate' | Error>): JetStreamPublisher {
    return {
      publish: (_contract: unknown, job: { webhookId: string }) => {
        const answer = answers[job.webhookId] ?? 'ok';
        return answer instanceof Error
          ? Promise.reject(answer)
          : Promise.resolve({ duplicate: answer === 'duplicate' });
      },
    } as unknown as JetStreamPublisher;
  }

  it('tells how many were published and how many were duplicates', async () => {
    const tallies: PublishTally[] = [];
    const jobs = new DeliveryJobPublisher(publisher({ wh_b: 'duplicate' }));
    await jobs.publishAll(requests, (t) => tallies.push(t));
    expect(tallies).toEqual([{ published: 3, duplicates: 1, failed: 0 }]);
    expect([jobs.published, jobs.duplicates]).toEqual([3, 1]);
  });

  it('counts every refused job of the batch, then throws the first refusal as it came', async () => {
    const first = new Error('nats: timeout');
    const tallies: PublishTally[] = [];
    const jobs = new DeliveryJobPublisher(
      publisher({ wh_b: first, wh_c: new Error('nats: no responders') }),
    );
    await expect(jobs.publishAll(requests, (t) => tallies.push(t))).rejects.toBe(first);
    expect(tallies).toEqual([{ published: 2, duplicates: 0, failed: 2 }]);
  });
});
