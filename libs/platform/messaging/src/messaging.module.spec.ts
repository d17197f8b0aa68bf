import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ObservabilityModule, ReadinessRegistry } from '@meridian/platform-observability';
import pino from 'pino';
import { Registry } from 'prom-client';
import { Consumers } from '@meridian/contracts';
import { JetStreamConsumers } from './jetstream-consumers';
import { MessagingModule } from './messaging.module';
import { NatsProbe } from './nats-probe';

/** NATS down: nothing listens on port 1. */
async function appWithNatsDown() {
  @Module({
    imports: [
      ObservabilityModule.forRoot({ service: 'x', logger: pino({ level: 'silent' }) }),
      MessagingModule.forRoot({
        connection: { url: 'nats://127.0.0.1:1' },
        prefix: '',
        name: 'x',
        probe: { intervalMs: 60_000, timeoutMs: 1_000 },
      }),
    ],
  })
  class App {}
  return NestFactory.createApplicationContext(App, { logger: false });
}

describe('MessagingModule: NATS is a metric, never readiness (ADR 0212 amendment)', () => {
  it('leaves /readyz ready while NATS is down and reports nats_connected 0', async () => {
    const module = await appWithNatsDown();
    try {
      expect(await module.get(ReadinessRegistry).report()).toEqual({
        ready: true,
        checks: {},
        failing: [],
      });
      await module.get(NatsProbe).probe();
      const metric = await module.get(Registry).getSingleMetric('nats_connected')?.get();
      expect(metric?.values.map((v) => v.value)).toEqual([0]);
    } finally {
      await module.close();
    }
  });
});

describe('messaging_consumer_attached', () => {
  it("reads each running consumer's attachment at scrape (0 while NATS is down)", async () => {
    const app = await appWithNatsDown();
    try {
      const consumers = app.get(JetStreamConsumers);
      consumers.run(Consumers.matcherAccountChanges, () => Promise.resolve());
      const metric = await app.get(Registry).getSingleMetric('messaging_consumer_attached')?.get();
      expect(metric?.values).toEqual([
        { labels: { consumer: Consumers.matcherAccountChanges.durable }, value: 0 },
      ]);
    } finally {
      await app.close();
    }
  });
});
