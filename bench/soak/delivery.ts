import { Consumers, Events, Streams } from '@meridian/contracts';
import { NatsNamespace } from '@meridian/platform-messaging';
import { DELIVERY_RETRY_WAITS_MS } from '@meridian/webhooks';
import { jetstreamManager } from '@nats-io/jetstream';
import { jobOf, ReceiverProcess, startDeliveryWorker } from '../delivery/throughput';
import { flatness, flatnessText, renderSoak, SAMPLE_MS, Sampler } from './sampler';

/**
 * Delivery soak (issue 18): the real delivery-worker process (bench/delivery's
 * startDeliveryWorker: own database and NATS namespace, 32 active webhooks on 32 loopback
 * hosts) against bench/delivery's receiver answering every second request 503 and the others
 * 200, fed SOAK_DELIVERY_RATE (100) new jobs per second on WEBHOOK for the soak. Failed attempts
 * are retried on the spec's schedule (5 s, 15 s, 30 s, 1 min, 5 min, 15 min, 30 min), so the
 * queue holds the events waiting for their next attempt: with half the attempts failing, an event
 * waits Σ 0.5^k × wait_k ≈ 51 s on average, and the consumer's pending + ack-pending should level
 * off near rate × 51 s (less within a 10-minute soak: the 15 and 30 min waits do not fill).
 */
const RATE = Number(process.env['SOAK_DELIVERY_RATE'] ?? 100);

interface QueueSample {
  atS: number;
  pending: number;
  ackPending: number;
}

/** Counters of the worker's /metrics summed by their `outcome` (or `reason`) label. */
async function scrape(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m =
      /^(delivery_attempts_total|delivery_waits_total|delivery_jobs_dropped_total)\{([^}]*)\} ([\d.e+]+)$/.exec(
        line,
      );
    if (!m) continue;
    const label = /(?:outcome|reason)="([^"]*)"/.exec(m[2]!)?.[1] ?? '';
    const key = `${m[1]}:${label}`;
    out.set(key, (out.get(key) ?? 0) + Number(m[3]));
  }
  return out;
}

/** Events expected to wait for a next attempt at `t` seconds, jobs arriving at `rate` from 0. */
function expectedWaiting(rate: number, t: number): number {
  let reached = 0;
  let sum = 0;
  DELIVERY_RETRY_WAITS_MS.forEach((waitMs, i) => {
    const w = waitMs / 1000;
    sum += 0.5 ** (i + 1) * Math.min(w, Math.max(0, t - reached));
    reached += w;
  });
  return rate * sum;
}

interface Minute {
  published: number;
  received: number;
  failed: number;
  attemptsFailed: number;
  maxQueue: number;
  maxPending: number;
}

export async function soakDelivery(minutes: number, log: (line: string) => void): Promise<string> {
  const receiver = new ReceiverProcess(2);
  await receiver.start();
  const worker = await startDeliveryWorker(receiver.urls);
  const ns = new NatsNamespace(worker.prefix);
  const jsm = await jetstreamManager(await worker.client.connection());
  const queue = async (atS: number): Promise<QueueSample> => {
    const info = await jsm.consumers.info(
      ns.stream(Streams.WEBHOOK.name),
      ns.consumer(Consumers.workerDeliveryJobs.durable),
    );
    return { atS, pending: info.num_pending, ackPending: info.num_ack_pending };
  };
  try {
    await receiver.reset();
    const metricsBefore = await scrape(worker.httpUrl);
    const [process0] = worker.processes;
    const sampler = new Sampler([process0!.pid!]);
    const rows: Minute[] = Array.from({ length: minutes }, () => ({
      published: 0,
      received: 0,
      failed: 0,
      attemptsFailed: 0,
      maxQueue: 0,
      maxPending: 0,
    }));
    const minuteAt = (atS: number) => Math.min(minutes - 1, Math.max(0, Math.floor(atS / 60)));
    const minuteNow = () => minuteAt(sampler.elapsedS());
    const queueSamples: QueueSample[] = [];
    let publishErrors = 0;
    let lastFailedAttempts = metricsBefore.get('delivery_attempts_total:failure') ?? 0;
    const observe = async () => {
      // What the receiver counted since the last sample (≤ 10 s ago) falls in that interval's minute.
      const row = rows[minuteAt(sampler.elapsedS() - SAMPLE_MS / 2000)]!;
      const report = await receiver.report();
      await receiver.reset();
      row.received += report.count;
      row.failed += report.failed;
      const q = await queue(sampler.elapsedS());
      queueSamples.push(q);
      row.maxQueue = Math.max(row.maxQueue, q.pending + q.ackPending);
      row.maxPending = Math.max(row.maxPending, q.pending);
      const failedAttempts =
        (await scrape(worker.httpUrl)).get('delivery_attempts_total:failure') ?? 0;
      row.attemptsFailed += failedAttempts - lastFailedAttempts;
      lastFailedAttempts = failedAttempts;
      log(
        `delivery soak ${sampler.elapsedS().toFixed(0)} s: ${report.count} attempts received (${report.failed} answered 503), queue ${q.pending} pending + ${q.ackPending} ack-pending, RSS ${sampler.samples.at(-1)!.rssMiB.toFixed(0)} MiB`,
      );
    };

    sampler.start();
    const startedAt = performance.now();
    const endAt = startedAt + minutes * 60_000;
    const timer = setInterval(
      () => void observe().catch((e: unknown) => log(`delivery soak sample failed: ${String(e)}`)),
      SAMPLE_MS,
    );
    const createdAt = new Date().toISOString();
    let published = 0;
    const inFlight = new Set<Promise<void>>();
    for (;;) {
      const now = performance.now();
      if (now >= endAt) break;
      const due = Math.floor(((now - startedAt) * RATE) / 1000);
      while (published < due) {
        const i = published++;
        const w = worker.webhooks[i % worker.webhooks.length]!;
        const row = rows[minuteNow()]!;
        const p = worker.publisher
          .publish(Events.deliveryJob, jobOf(w, `ev_soak_${i}`, createdAt))
          .then(
            () => void (row.published += 1),
            () => void (publishErrors += 1),
          )
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    await Promise.all(inFlight);
    clearInterval(timer);
    await observe();
    sampler.stop();
    const metricsAfter = await scrape(worker.httpUrl);
    if (process0!.exitCode !== null)
      throw new Error(`delivery-worker exited (${process0!.exitCode})`);

    const delta = (key: string) => (metricsAfter.get(key) ?? 0) - (metricsBefore.get(key) ?? 0);
    const succeeded = delta('delivery_attempts_total:success');
    const failedAttempts = delta('delivery_attempts_total:failure');
    const skipped = delta('delivery_attempts_total:skipped_breaker_open');
    const dropped = [...metricsAfter.keys()]
      .filter((k) => k.startsWith('delivery_jobs_dropped_total:'))
      .reduce((n, k) => n + delta(k), 0);
    const waits = [...metricsAfter.keys()]
      .filter((k) => k.startsWith('delivery_waits_total:'))
      .map((k) => `${k.split(':')[1]} ${delta(k).toLocaleString('en')}`)
      .join(', ');
    const received = rows.reduce((n, r) => n + r.received, 0);
    const answered503 = rows.reduce((n, r) => n + r.failed, 0);
    const totalPublished = rows.reduce((n, r) => n + r.published, 0);

    const f = flatness(sampler);
    const steadyBound = expectedWaiting(RATE, Number.POSITIVE_INFINITY) + RATE * 10;
    const maxQueue = Math.max(...queueSamples.map((q) => q.pending + q.ackPending));
    const maxPending = Math.max(...queueSamples.map((q) => q.pending));
    const endQueue = queueSamples.at(-1)!;
    const endSeconds = endQueue.atS;
    const expectedEnd = expectedWaiting(RATE, endSeconds);
    const bounded = maxQueue <= steadyBound && maxPending <= RATE * 10;
    return renderSoak({
      title: `delivery, ${minutes} min, receiver failing every second request`,
      method: `The real delivery-worker process (bench/delivery: own database and NATS namespace, 32 active webhooks on 32 loopback hosts, signing, SSRF check, breaker, limits, attempt log and billing on) against bench/delivery's receiver answering every second request 503 and the others 200; ${RATE} new jobs/s published on WEBHOOK for the soak, failed attempts retried on the spec's schedule. Queue = the WEBHOOK consumer's num_pending (not yet handed to the worker) + num_ack_pending (handed out, not acked: in flight or waiting for their next attempt), JetStream consumer info every 10 s; its max over the minute. With half the attempts failing the schedule keeps rate × Σ 0.5^k × wait_k ≈ ${Math.round(expectedWaiting(RATE, Number.POSITIVE_INFINITY)).toLocaleString('en')} events waiting in steady state (bound used: that + 10 s of jobs = ${Math.round(steadyBound).toLocaleString('en')}); ${Math.round(expectedEnd).toLocaleString('en')} expected after ${Math.round(endSeconds)} s, since the longer waits have not filled yet.`,
      columns: [
        'jobs published',
        'attempts received /s',
        'of which 503',
        'failed attempts (retries scheduled)',
        'queue max (pending + ack-pending)',
        'of which not yet handed out (max)',
      ],
      minutes: rows.map((r) => [
        String(r.published),
        (r.received / 60).toFixed(1),
        String(r.failed),
        String(r.attemptsFailed),
        String(r.maxQueue),
        String(r.maxPending),
      ]),
      sampler,
      processes: 'delivery-worker (1 process)',
      verdict: `Verdict: ${flatnessText(f)}; queue **${bounded ? 'bounded' : 'NOT bounded'}**: ${totalPublished.toLocaleString('en')} jobs published (${publishErrors} publish errors), ${received.toLocaleString('en')} attempts received (${answered503.toLocaleString('en')} answered 503), the worker counted ${succeeded.toLocaleString('en')} deliveries succeeded, ${failedAttempts.toLocaleString('en')} attempts failed (each schedules a retry until the 8th), ${skipped} skipped by the breaker, ${dropped} jobs dropped; waits: ${waits || 'none'}. Queue at the end ${(endQueue.pending + endQueue.ackPending).toLocaleString('en')} (expected by the schedule ${Math.round(expectedEnd).toLocaleString('en')}), max ${maxQueue.toLocaleString('en')} (bound ${Math.round(steadyBound).toLocaleString('en')}), not yet handed out max ${maxPending} (bound: 10 s of jobs, ${RATE * 10}).`,
    });
  } finally {
    await worker.stop();
    receiver.stop();
  }
}
