import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Streams } from '@meridian/contracts';
import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { provisionMessaging } from '@meridian/platform-messaging';
import {
  createTestDatabase,
  deleteNatsNamespace,
  freePort,
  startAppProcess,
  storedMessages,
  testNatsUrl,
  uniqueNatsPrefix,
  type TestDatabase,
} from '@meridian/testing';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';

export interface World {
  db: TestDatabase;
  natsUrl: string;
  prefix: string;
  cleanup(): Promise<void>;
}

/** A database with the indexer schema and a provisioned NATS namespace of the test file's own. */
export async function createWorld(): Promise<World> {
  const db = await createTestDatabase({ prefix: 'indexer' });
  const dataSource = createAppDataSource(dataSourceOptions(db.url));
  await runMigrations(dataSource, SCHEMA);
  const natsUrl = testNatsUrl();
  const prefix = uniqueNatsPrefix();
  const nc = await connect({ servers: natsUrl });
  await provisionMessaging(await jetstreamManager(nc), prefix);
  await nc.close();
  return {
    db,
    natsUrl,
    prefix,
    cleanup: async () => {
      await deleteNatsNamespace(natsUrl, prefix);
      await db.drop();
    },
  };
}

export interface LogLine {
  msg?: string;
  network?: string;
  [key: string]: unknown;
}

export interface IndexerProcess {
  child: ChildProcess;
  lines: LogLine[];
  port: number;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Runs chain-indexer as production runs it (`main.ts` in its own process). */
export async function startIndexer(
  world: World,
  env: Record<string, string>,
): Promise<IndexerProcess> {
  const lines: LogLine[] = [];
  let latest: ChildProcess | undefined;
  const app = await startAppProcess(async () => {
    const port = await freePort();
    return {
      main: 'apps/chain-indexer/src/main.ts',
      env: {
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(port),
        DATABASE_URL: world.db.url,
        NATS_URL: world.natsUrl,
        NATS_PREFIX: world.prefix,
        LOG_LEVEL: 'info',
        POLL_INTERVAL_MS: '200',
        LEASE_TTL_MS: '3000',
        ...env,
      },
      healthUrl: `http://127.0.0.1:${port}/healthz`,
      onSpawn: (child) => {
        // The lines of the child that comes up, not of one that found its port taken.
        latest = child;
        lines.length = 0;
        child.stderr!.pipe(process.stderr);
        createInterface({ input: child.stdout! }).on('line', (text) => {
          if (child !== latest) return;
          try {
            lines.push(JSON.parse(text) as LogLine);
          } catch {
            // not a log line
          }
        });
      },
    };
  });
  await waitUntil(
    () => lines.some((l) => l.msg === 'chain-indexer listening'),
    10_000,
    'indexer start',
  );
  return {
    child: app.child,
    lines,
    port: Number(app.options.env!['HTTP_PORT']),
    kill: async (signal = 'SIGTERM') => {
      app.kill(signal);
      await app.exited();
    },
  };
}

export interface StreamMessage {
  seq: number;
  subject: string;
  msgId: string;
  kind: 'block' | 'removed';
  body: {
    id: string;
    number: number;
    hash: string;
    parentHash: string;
    transactions: Array<{
      hash: string;
      from: string;
      to: string | null;
      nonce: string;
      value: string;
    }>;
    receipts: Array<{ transactionHash: string; status?: string }>;
    part: { index: number; count: number };
    removed: Array<{ number: number; hash: string }>;
    commonAncestor: { number: number; hash: string };
    newHead: { number: number; hash: string };
  };
}

/** Everything the CHAIN stream of the namespace holds, in stream order. */
export class ChainStream {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
  ) {}

  static async open(world: World): Promise<ChainStream> {
    return new ChainStream(await connect({ servers: world.natsUrl }), world.prefix);
  }

  async all(): Promise<StreamMessage[]> {
    const stored = await storedMessages(
      await jetstreamManager(this.nc),
      `${this.prefix}_${Streams.CHAIN.name}`,
    );
    return stored.map((message) => {
      const subject = message.subject.slice(this.prefix.length + 1);
      return {
        seq: message.seq,
        subject,
        msgId: message.header.get('Nats-Msg-Id'),
        kind: subject.startsWith('chain.block.removed') ? 'removed' : 'block',
        body: message.json(),
      };
    });
  }

  async close(): Promise<void> {
    await this.nc.close();
  }
}

/** The canonical chain the messages describe: blocks applied, removals undone, by number. */
export function canonicalFrom(messages: readonly StreamMessage[]): Map<number, string> {
  const chain = new Map<number, string>();
  for (const m of messages) {
    if (m.kind === 'removed') {
      for (const r of m.body.removed) {
        if (chain.get(r.number) !== r.hash)
          throw new Error(`removal of ${r.number} ${r.hash} that is not canonical`);
        chain.delete(r.number);
      }
    } else if (m.body.part.index === 0) {
      const parent = chain.get(m.body.number - 1);
      if (chain.size > 0 && parent !== m.body.parentHash)
        throw new Error(`block ${m.body.number} does not extend the published chain`);
      if (chain.has(m.body.number))
        throw new Error(`block ${m.body.number} published twice without a removal`);
      chain.set(m.body.number, m.body.hash);
    }
  }
  return chain;
}

export async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** The node's hash at every height of `numbers`. */
export async function nodeHashes(
  url: string,
  numbers: Iterable<number>,
): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const n of numbers) {
    const block = await rpc<{ hash: string }>(url, 'eth_getBlockByNumber', [
      `0x${n.toString(16)}`,
      false,
    ]);
    out.set(n, block.hash);
  }
  return out;
}

export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}
