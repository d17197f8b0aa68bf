import { ReadinessRegistry } from '@meridian/platform-observability';
import { JetStreamConsumers } from './jetstream-consumers';
import { MessagingModule, type MessagingOptions } from './messaging.module';
import type { NatsClient } from './nats-client';

/** NATS down: the connection's check fails as the real client's does while disconnected. */
function moduleWith(readiness: boolean | undefined) {
  const registry = new ReadinessRegistry(100);
  const client = {
    start: jest.fn(),
    check: () => Promise.reject(new Error('not connected')),
  } as unknown as NatsClient;
  const options: MessagingOptions = {
    connection: { url: 'nats://127.0.0.1:1' },
    prefix: '',
    name: 'x',
    readiness,
  };
  new MessagingModule(client, {} as JetStreamConsumers, registry, options).onModuleInit();
  return { registry, client };
}

describe('MessagingModule readiness', () => {
  it('makes the app unready while NATS is down (the default)', async () => {
    const { registry, client } = moduleWith(undefined);
    expect(await registry.report()).toEqual({
      ready: false,
      checks: { nats: 'not connected' },
      failing: ['nats'],
    });
    expect(client.start).toHaveBeenCalled();
  });

  it('leaves NATS out of /readyz when the app opts out (rpc-gateway), still connecting', async () => {
    const { registry, client } = moduleWith(false);
    expect(await registry.report()).toEqual({ ready: true, checks: {}, failing: [] });
    expect(client.start).toHaveBeenCalled();
  });
});
