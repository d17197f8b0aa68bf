import { SINGLE_PARTITION } from '@meridian/contracts';
import { createAppDataSource } from '@meridian/platform-db';
import {
  ConsumerRunner,
  JetStreamPublisher,
  NatsClient,
  NatsNamespace,
} from '@meridian/platform-messaging';
import { testNatsUrl } from '@meridian/testing';
import { systemClock } from '@meridian/time';
import { dataSourceOptions } from '../src/db/data-source';
import { DeliveryJobPublisher } from '../src/delivery-jobs/delivery-job.publisher';
import { chainBlocksConsumer, chainBlocksHandler } from '../src/matching/chain-blocks.consumer';
import { MatchingEngine } from '../src/matching/matching.engine';
import { MatchingRepository } from '../src/matching/matching.repository';
import { EventsBudget } from '../src/throttling/events-budget';

/**
 * The matcher's engine and ordered consumer in a process of its own, for the kill -9 test
 * (argv: database URL, NATS prefix). Prints `ready` once consuming.
 */
async function main(): Promise<void> {
  const [url, prefix] = process.argv.slice(2) as [string, string];
  const ds = createAppDataSource(dataSourceOptions(url));
  await ds.initialize();
  const client = new NatsClient({ url: testNatsUrl(), name: 'matcher-child' });
  const ns = new NatsNamespace(prefix);
  const publisher = new JetStreamPublisher(client, ns);
  const engine = new MatchingEngine(
    new MatchingRepository(ds),
    new DeliveryJobPublisher(publisher),
    new EventsBudget(),
    systemClock,
    SINGLE_PARTITION,
  );
  await engine.load();
  const runner = new ConsumerRunner(
    { ...chainBlocksConsumer(SINGLE_PARTITION), ackWaitMs: 10_000, backoffMs: [100] },
    chainBlocksHandler(engine),
    { client, namespace: ns, publisher, retryDelayMs: 100 },
  );
  runner.start();
  process.stdout.write('ready\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`matcher child failed: ${String(error)}\n`);
  process.exit(1);
});
