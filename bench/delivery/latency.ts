import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Subjects } from '@meridian/contracts';
import { NatsNamespace } from '@meridian/platform-messaging';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import WebSocket from 'ws';

const ROOT = join(__dirname, '..', '..');

/** What tools/stack/private-stack-main.ts prints once the stack is up (the parts used here). */
interface StackStarted {
  endpoints: {
    webhooks: string;
    devnets: Record<string, string>;
    demo: { apiKey: string };
  };
  natsUrl: string;
  natsPrefix: string;
}

/** The stack's processes the path block → delivery goes through (the gateway: startStack needs it). */
const PROCESSES = [
  'billing-ledger',
  'rpc-gateway-eu',
  'chain-indexer',
  'webhook-matcher',
  'delivery-worker',
];
const NETWORK = 'eth-mainnet';
const FUNDED = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
/** Starter allows 5 events/s per account: one block every 300 ms stays well under it. */
const SPACING_MS = 300;

export interface Quantiles {
  p50: number;
  p99: number;
  max: number;
}

export interface LatencyResult extends Quantiles {
  n: number;
  missed: number;
  /** Of which: block → job published on WEBHOOK (indexer + matcher). */
  toJob: Quantiles;
  /** Of which: job published → delivery received (worker). */
  jobToReceived: Quantiles;
}

function quantiles(values: number[]): Quantiles {
  const sorted = [...values].sort((a, b) => a - b);
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
  return { p50: q(0.5), p99: q(0.99), max: sorted.at(-1)! };
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** The hash of the block that holds `txHash` (mined at once with automine; polled to be sure). */
async function blockOf(url: string, txHash: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const receipt = (await rpc(url, 'eth_getTransactionReceipt', [txHash])) as {
      blockHash: string;
    } | null;
    if (receipt) return receipt.blockHash;
    if (Date.now() > deadline) throw new Error(`transaction ${txHash} not mined in 10 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** When each block hash was first delivered to the receiver (unconfirmed phase). */
function startReceiver(delivered: Map<string, number>): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString()) as {
          block?: { hash?: string };
        };
        const hash = event.block?.hash;
        if (hash && !delivered.has(hash)) delivered.set(hash, at);
      } catch {
        // not an event: ignored
      }
      res.writeHead(200).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` }),
    ),
  );
}

/** The devnet's newHeads, as any subscriber sees them: when each block came to exist. */
function watchHeads(wsUrl: string, heads: Map<string, number>): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl);
    ws.on('error', reject);
    ws.on('open', () => {
      ws.send(
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }),
      );
      resolve(ws);
    });
    ws.on('message', (data: Buffer) => {
      const at = performance.now();
      const message = JSON.parse(data.toString()) as { params?: { result?: { hash?: string } } };
      const hash = message.params?.result?.hash;
      if (hash) heads.set(hash, at);
    });
  });
}

/**
 * Block on the devnet → first delivery received, through the real processes of the local
 * stack (started by its own launcher on a database and NATS namespace of their own): the
 * chain-indexer follows anvil's newHeads and publishes the block, webhook-matcher matches it
 * and publishes the job, delivery-worker signs and POSTs it to a receiver here. The devnet is
 * switched to mining one block per transaction; one transaction to a watched address every
 * 300 ms. Latency = receiver arrival − the block's newHeads notification to this process.
 */
export async function measureLatency(
  samples: number,
  log: (line: string) => void,
): Promise<LatencyResult> {
  // The stack runs in a process of its own (tools/stack/private-stack-main.ts): a benchmark may
  // not import the launcher (module boundaries).
  const stack = spawn(
    process.execPath,
    [
      '-r',
      '@swc-node/register',
      join(ROOT, 'tools/stack/private-stack-main.ts'),
      JSON.stringify({ name: 'benchdelivery', apps: PROCESSES, devnets: [NETWORK] }),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const stackExited = new Promise((resolve) => stack.once('exit', resolve));
  const delivered = new Map<string, number>();
  const heads = new Map<string, number>();
  const jobs = new Map<string, number>();
  let nc: NatsConnection | undefined;
  let receiver: { server: Server; url: string } | undefined;
  let ws: WebSocket | undefined;
  try {
    log('delivery bench: starting the local stack (indexer, matcher, worker, ledger, gateway)');
    const started = await new Promise<StackStarted>((resolve, reject) => {
      stack.once('exit', (code) =>
        reject(new Error(`the stack exited (${code}) before it was up`)),
      );
      createInterface({ input: stack.stdout! }).once('line', (line) => {
        const answer = JSON.parse(line) as StackStarted & { error?: string };
        if (answer.error) reject(new Error(`the stack did not start: ${answer.error}`));
        else resolve(answer);
      });
    });
    const { endpoints, natsUrl, natsPrefix } = started;
    const devnetUrl = endpoints.devnets[NETWORK]!;
    await rpc(devnetUrl, 'evm_setIntervalMining', [0]);
    await rpc(devnetUrl, 'evm_setAutomine', [true]);
    receiver = await startReceiver(delivered);
    ws = await watchHeads(devnetUrl.replace(/^http/, 'ws'), heads);
    // Core NATS sees each job as the stream stores it: the indexer + matcher share of the path.
    nc = await connect({ servers: natsUrl, name: `bench-delivery-${natsPrefix}` });
    nc.subscribe(new NatsNamespace(natsPrefix).subject(Subjects.webhook.deliveryJob.all), {
      callback: (_error, message) => {
        const at = performance.now();
        const hash = message.json<{ payload: { block?: { hash?: string } } }>().payload.block?.hash;
        if (hash && !jobs.has(hash)) jobs.set(hash, at);
      },
    });

    const created = await fetch(`${endpoints.webhooks}/webhooks`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${endpoints.demo.apiKey}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        network: NETWORK,
        trigger_type: 'address_activity',
        addresses: [WATCHED],
        phases: ['unconfirmed'],
        target_url: receiver.url,
      }),
    });
    if (created.status !== 201)
      throw new Error(`creating the webhook: HTTP ${created.status} ${await created.text()}`);

    // Warm-up: until a first delivery arrives (the worker has the webhook, every path is hot).
    const warmDeadline = Date.now() + 120_000;
    while (delivered.size === 0) {
      if (Date.now() > warmDeadline)
        throw new Error('no delivery within 120 s of creating the webhook');
      await rpc(devnetUrl, 'eth_sendTransaction', [{ from: FUNDED, to: WATCHED, value: '0x1' }]);
      await new Promise((r) => setTimeout(r, 1_000));
    }
    log('delivery bench: first delivery received; measuring');

    const latencies: number[] = [];
    const toJob: number[] = [];
    const jobToReceived: number[] = [];
    let missed = 0;
    for (let i = 0; i < samples + 10; i += 1) {
      const started = performance.now();
      const txHash = (await rpc(devnetUrl, 'eth_sendTransaction', [
        { from: FUNDED, to: WATCHED, value: '0x1' },
      ])) as string;
      const hash = await blockOf(devnetUrl, txHash);
      const deadline = performance.now() + 5_000;
      while (!(delivered.has(hash) && heads.has(hash)) && performance.now() < deadline)
        await new Promise((r) => setTimeout(r, 1));
      if (i >= 10) {
        if (delivered.has(hash) && heads.has(hash)) {
          latencies.push(delivered.get(hash)! - heads.get(hash)!);
          if (jobs.has(hash)) {
            toJob.push(jobs.get(hash)! - heads.get(hash)!);
            jobToReceived.push(delivered.get(hash)! - jobs.get(hash)!);
          }
        } else missed += 1;
      }
      const rest = SPACING_MS - (performance.now() - started);
      if (rest > 0) await new Promise((r) => setTimeout(r, rest));
    }
    return {
      ...quantiles(latencies),
      n: latencies.length,
      missed,
      toJob: quantiles(toJob),
      jobToReceived: quantiles(jobToReceived),
    };
  } finally {
    ws?.close();
    await nc?.close();
    if (receiver) {
      receiver.server.closeAllConnections();
      receiver.server.close();
    }
    if (stack.exitCode === null && stack.signalCode === null) {
      stack.kill('SIGTERM');
      await stackExited;
    }
  }
}
