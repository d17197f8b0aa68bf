import pino from 'pino';
import { Registry } from 'prom-client';
import { NatsProbe } from './nats-probe';

async function gauge(registry: Registry): Promise<number | undefined> {
  const metric = await registry.getSingleMetric('nats_connected')?.get();
  return metric?.values[0]?.value;
}

describe('NatsProbe', () => {
  const logger = pino({ level: 'silent' });

  it('sets nats_connected from each round trip', async () => {
    const registry = new Registry();
    let up = true;
    const nats = { check: () => (up ? Promise.resolve() : Promise.reject(new Error('down'))) };
    const probe = new NatsProbe(nats, registry, logger, { intervalMs: 1_000, timeoutMs: 50 });
    await probe.probe();
    expect(await gauge(registry)).toBe(1);
    up = false;
    await probe.probe();
    expect(await gauge(registry)).toBe(0);
    up = true;
    await probe.probe();
    expect(await gauge(registry)).toBe(1);
  });

  it('counts a round trip unanswered at the timeout as down, and sends no second meanwhile', async () => {
    const registry = new Registry();
    let answer!: () => void;
    const check = jest.fn(() => new Promise<void>((resolve) => (answer = resolve)));
    const probe = new NatsProbe({ check }, registry, logger, { intervalMs: 1_000, timeoutMs: 20 });
    await probe.probe();
    expect(await gauge(registry)).toBe(0);
    await probe.probe();
    expect(check).toHaveBeenCalledTimes(1);
    answer();
    await new Promise((resolve) => setImmediate(resolve));
    await probe.probe();
    expect(check).toHaveBeenCalledTimes(2);
  });
});
