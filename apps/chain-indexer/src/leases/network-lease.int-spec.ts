import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { NatsClient, NatsNamespace, provisionMessaging } from '@meridian/platform-messaging';
import { deleteNatsNamespace, FakeClock, testNatsUrl, uniqueNatsPrefix } from '@meridian/testing';
import { NetworkLease } from './network-lease';

/** The lease against real NATS KV, time driven by a FakeClock (no sleeping for the lease time). */
describe('NetworkLease', () => {
  const url = testNatsUrl();
  const prefix = uniqueNatsPrefix();
  const clock = new FakeClock();
  let client: NatsClient;
  const TTL = 9_000;
  const lease = (holder: string) =>
    new NetworkLease('eth-mainnet', holder, TTL, clock, {
      client,
      namespace: new NatsNamespace(prefix),
    });

  beforeAll(async () => {
    const nc = await connect({ servers: url });
    await provisionMessaging(await jetstreamManager(nc), prefix);
    await nc.close();
    client = new NatsClient({ url, name: 'lease-test' });
    await client.connection();
  });

  afterAll(async () => {
    await client.close();
    await deleteNatsNamespace(url, prefix);
  });

  it('one holder at a time; takeover only after the revision stood still a whole lease time', async () => {
    const a = lease('a');
    const b = lease('b');
    const fenceA = await a.tick();
    expect(fenceA).toBeGreaterThan(0);
    expect(await b.tick()).toBeUndefined(); // observes a's revision

    clock.advance(TTL / 3);
    expect(a.renewDue()).toBe(true);
    expect(await a.tick()).toBe(fenceA); // renewed: same fence, new revision
    clock.advance(TTL - 1);
    expect(await b.tick()).toBeUndefined(); // the revision moved: b starts watching again
    expect(a.token()).toBe(fenceA);

    // a stops renewing (crashed). b has watched revision 2 since the last tick: it may take over
    // a whole lease time after that sight, by which time a's lease has run out on a's clock.
    clock.advance(TTL - 1);
    expect(a.token()).toBeUndefined();
    expect(await b.tick()).toBeUndefined();
    clock.advance(1);
    const fenceB = await b.tick();
    expect(fenceB).toBeGreaterThan(fenceA!);
    expect(await a.tick()).toBeUndefined(); // the old holder does not get it back
  });

  it('release hands the lease over at once', async () => {
    const c = lease('c');
    const d = lease('d');
    await c.tick(); // the lease of the first test is still held by b: c watches it
    clock.advance(TTL);
    const fenceC = await c.tick();
    expect(fenceC).toBeDefined();
    await c.release();
    expect(await d.tick()).toBeGreaterThan(fenceC!);
  });
});
