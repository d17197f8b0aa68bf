import { randomBytes } from 'node:crypto';
import { Receiver, WorkerHarness, stillFalse, until } from '../testing/worker-harness';

const secret = () => `whsec_${randomBytes(24).toString('base64')}`;

/**
 * Two workers, partitions 0/2 and 1/2 (ADR 0432): each reads only its route's jobs, so an
 * endpoint's limits and breaker live in one worker. Real NATS, Postgres and HTTP receiver.
 */
describe('delivery-worker partitions: worker i of n delivers the jobs of route i only', () => {
  const h = new WorkerHarness();
  const receiver = new Receiver();

  beforeAll(async () => {
    await h.setup(2);
    await receiver.start();
  });

  afterAll(async () => {
    await h.teardown();
    await receiver.stop();
  });

  it('route 1 waits for worker 1/2 while worker 0/2 delivers route 0; then each is delivered once', async () => {
    await h.putWebhook('wh_r0', `${receiver.url}/r0`, [secret()], 'active', 'acc_r0');
    await h.putWebhook('wh_r1', `${receiver.url}/r1`, [secret()], 'active', 'acc_r1');
    await h.start({ partition: '0/2' });
    for (let i = 0; i < 3; i++) {
      await h.publishJob('wh_r0', { accountId: 'acc_r0', route: 0 });
      await h.publishJob('wh_r1', { accountId: 'acc_r1', route: 1 });
    }
    await until(() => receiver.at('/r0').length === 3);
    await stillFalse(() => receiver.at('/r1').length > 0);

    await h.start({ partition: '1/2' });
    await until(() => receiver.at('/r1').length === 3);
    await stillFalse(() => receiver.at('/r0').length > 3 || receiver.at('/r1').length > 3);
    const ids = (path: string) => new Set(receiver.at(path).map((r) => r.headers['webhook-id']));
    expect(ids('/r0').size).toBe(3);
    expect(ids('/r1').size).toBe(3);
    // Every attempt billed once, whichever worker made it.
    expect(await until(async () => (await h.billedCu('acc_r0')) === 75 && 75)).toBe(75);
    expect(await until(async () => (await h.billedCu('acc_r1')) === 75 && 75)).toBe(75);
  });
});
