import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { deleteNatsNamespace, testNatsUrl, uniqueNatsPrefix } from './nats-namespace';
import { storedMessages } from './stored-messages';

describe('storedMessages', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const prefix = uniqueNatsPrefix();
  const stream = `${prefix}_READ`;

  beforeAll(async () => {
    nc = await connect({ servers: testNatsUrl() });
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [`${prefix}.read.>`] });
  });
  afterAll(async () => {
    await deleteNatsNamespace(testNatsUrl(), prefix);
    await nc.close();
  });

  it('is empty for an empty stream', async () => {
    expect(await storedMessages(jsm, stream)).toEqual([]);
  });

  it('reads every message in stream order and skips only deleted sequences', async () => {
    const js = jetstream(nc);
    for (const n of [1, 2, 3, 4]) await js.publish(`${prefix}.read.n`, JSON.stringify({ n }));
    await jsm.streams.deleteMessage(stream, 2);

    const read = await storedMessages(jsm, stream);
    expect(read.map((m) => [m.seq, m.json<{ n: number }>().n])).toEqual([
      [1, 1],
      [3, 3],
      [4, 4],
    ]);
  });

  it('fails, rather than skipping, when a message cannot be read', async () => {
    const failing = {
      streams: {
        info: (name: string) => jsm.streams.info(name),
        getMessage: async (name: string, query: { seq: number }) => {
          if (query.seq === 3) throw new Error('timeout');
          return jsm.streams.getMessage(name, query);
        },
      },
    } as unknown as JetStreamManager;
    await expect(storedMessages(failing, stream)).rejects.toThrow('timeout');
  });
});
