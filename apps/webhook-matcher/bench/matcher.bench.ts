import { randomBytes } from 'node:crypto';
import { Subjects, type ChainBlock } from '@meridian/contracts';
import { startAnvil } from '@meridian/testing';
import { blockActivities, normalizeFilter, TRANSFER_TOPIC } from '@meridian/webhooks';
import { matchBlock } from '../src/matching/block-matcher';
import { MatchIndex } from '../src/matching/match-index';
import { ChainFeed, MatcherHarness, rpc } from '../test/matcher-harness';

/**
 * `npm run bench matcher` (issue 14): matched transactions/s against 1,000,000 watched
 * addresses over 1,000 webhooks, beside a bare loop that only decodes the same blocks (JSON
 * parse of the CHAIN message + walking every transaction and log, transfer participants
 * included: the floor); RSS with the 1M index; block on an anvil devnet → delivery job on the
 * WEBHOOK stream, p50/p99, through the real engine, Postgres and NATS.
 */
const WEBHOOKS = 1_000;
const PER_WEBHOOK = 1_000;
const BLOCKS = 200;
const TXS_PER_BLOCK = 500;
const SYNC = '0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1';
const SWAP = '0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822';

const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;
const topicOf = (address: string) => `0x${'0'.repeat(24)}${address.slice(2)}`;
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
const gc = () => (globalThis as { gc?: () => void }).gc?.();

/** 1,000 lists of 1,000 random addresses (generated before the timed build). */
function generateLists(): string[][] {
  return Array.from({ length: WEBHOOKS }, () => Array.from({ length: PER_WEBHOOK }, () => hex(20)));
}

function buildIndex(lists: readonly string[][]): { index: MatchIndex; watched: string[] } {
  const index = new MatchIndex();
  const watched: string[] = [];
  for (let w = 0; w < WEBHOOKS; w++) {
    const listId = `al_${[...String(w)]
      .map((d) => 'bcdefghijk'[Number(d)])
      .join('')
      .padStart(24, 'a')}`;
    index.upsertWebhook({
      id: `wh_${w}`,
      accountId: `acc_${w % 300}`,
      network: 'E',
      triggerType: 'address_activity',
      tree: normalizeFilter({ list_refs: [listId] }).tree,
      confirmDepth: 12,
      phases: ['unconfirmed', 'confirmed'],
    });
    const members = lists[w]!;
    index.addListEntries(listId, members);
    if (w % 10 === 0) watched.push(...members.slice(0, 5));
  }
  return { index, watched };
}

/** Half native transfers, a third ERC-20 transfers, the rest swaps (5 logs); ~1 % touch a watched address. */
function buildBlocks(watched: readonly string[]): string[] {
  const tokens = Array.from({ length: 50 }, () => hex(20));
  const blocks: string[] = [];
  for (let b = 0; b < BLOCKS; b++) {
    const hash = hex(32);
    const transactions: Record<string, unknown>[] = [];
    const receipts: Record<string, unknown>[] = [];
    let logIndex = 0;
    for (let t = 0; t < TXS_PER_BLOCK; t++) {
      const txHash = hex(32);
      const from = Math.random() < 0.01 ? watched[(Math.random() * watched.length) | 0]! : hex(20);
      const kind = Math.random();
      const logs: Record<string, unknown>[] = [];
      const log = (address: string, topics: string[]) =>
        logs.push({
          address,
          topics,
          data: hex(32),
          logIndex: `0x${(logIndex++).toString(16)}`,
          transactionHash: txHash,
          transactionIndex: `0x${t.toString(16)}`,
          blockHash: hash,
          blockNumber: `0x${b.toString(16)}`,
          removed: false,
        });
      const token = tokens[(Math.random() * tokens.length) | 0]!;
      let to = hex(20);
      if (kind >= 0.5 && kind < 0.85) {
        log(token, [TRANSFER_TOPIC, topicOf(from), topicOf(hex(20))]);
        to = token;
      } else if (kind >= 0.85) {
        const pair = hex(20);
        log(token, [TRANSFER_TOPIC, topicOf(from), topicOf(pair)]);
        log(tokens[0]!, [TRANSFER_TOPIC, topicOf(pair), topicOf(from)]);
        log(pair, [SYNC]);
        log(pair, [SWAP, topicOf(hex(20)), topicOf(from)]);
        log(token, [
          '0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925',
          topicOf(from),
          topicOf(hex(20)),
        ]);
        to = hex(20);
      }
      transactions.push({
        hash: txHash,
        from,
        to,
        value: '0x0',
        input: '0x',
        nonce: '0x1',
        gas: '0x5208',
        type: '0x2',
      });
      receipts.push({ transactionHash: txHash, status: '0x1', logs });
    }
    blocks.push(
      JSON.stringify({
        id: `E:${hash}:0`,
        network: 'E',
        number: b,
        hash,
        parentHash: hex(32),
        timestamp: 1_700_000_000 + b,
        transactions,
        receipts,
        part: { index: 0, count: 1 },
        publishedAt: new Date().toISOString(),
      }),
    );
  }
  return blocks;
}

function timeLoop(
  blocks: readonly string[],
  body: (block: ChainBlock) => number,
): { txPerS: number; out: number } {
  let out = 0;
  const rounds = 3;
  const start = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++)
    for (const raw of blocks) out += body(JSON.parse(raw) as ChainBlock);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return { txPerS: (rounds * blocks.length * TXS_PER_BLOCK) / seconds, out };
}

async function latency(): Promise<{ p50: number; p99: number; n: number }> {
  const anvil = await startAnvil({ chainId: 1 });
  const h = new MatcherHarness();
  try {
    await h.start();
    const watched = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
    await h.createWebhook({
      id: 'wh_bench',
      accountId: 'acc_bench',
      network: 'E',
      addresses: [watched],
      phases: ['unconfirmed'],
    });
    await h.setEventCaps('acc_bench', 10_000, 120_000);
    await h.matcher();
    const feed = new ChainFeed(anvil.url, 'E', h.publisher);
    const conn = await h.client.connection();
    const seen = new Map<string, number>();
    const sub = conn.subscribe(h.ns.subject(Subjects.webhook.deliveryJob.of('acc_bench')), {
      callback: (_e, m) => {
        const job = m.json<{ payload: { block: { hash: string } } }>();
        seen.set(job.payload.block.hash, performance.now());
      },
    });
    const samples: number[] = [];
    let last = await feed.head();
    for (let i = 0; i < 60; i++) {
      await rpc(anvil.url, 'eth_sendTransaction', [
        { from: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266', to: watched, value: '0x1' },
      ]);
      let head = await feed.head();
      while (head <= last) {
        await new Promise((r) => setTimeout(r, 1));
        head = await feed.head();
      }
      // From the block existing on the devnet to the job on the WEBHOOK stream.
      const t0 = performance.now();
      const blocks = await feed.publishRange(last + 1, head);
      last = blocks.at(-1)!.number;
      const hash = blocks.at(-1)!.hash;
      const deadline = Date.now() + 5_000;
      while (!seen.has(hash) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
      if (seen.has(hash) && i >= 10) samples.push(seen.get(hash)! - t0);
    }
    sub.unsubscribe();
    samples.sort((a, b) => a - b);
    const q = (p: number) => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))]!;
    return { p50: q(0.5), p99: q(0.99), n: samples.length };
  } finally {
    await h.stop();
    await anvil.stop();
  }
}

export async function runBenchmark(): Promise<string> {
  gc();
  const baseRss = process.memoryUsage().rss;
  const lists = generateLists();
  const loadStart = performance.now();
  const { index, watched } = buildIndex(lists);
  const loadMs = performance.now() - loadStart;
  gc();
  const indexRss = process.memoryUsage().rss;
  const blocks = buildBlocks(watched);

  // Warm both loops, then measure each (alternating order would not change a CPU-bound loop).
  timeLoop(blocks.slice(0, 20), (b) => [...blockActivities(b)].length);
  timeLoop(blocks.slice(0, 20), (b) => matchBlock(index, b).length);
  const floor = timeLoop(blocks, (b) => {
    let n = 0;
    for (const a of blockActivities(b)) if (a.from !== null) n++;
    return n;
  });
  const matched = timeLoop(blocks, (b) => matchBlock(index, b).length);
  const lat = await latency();

  return [
    `| measure | value | goal |`,
    `| --- | --- | --- |`,
    `| watched addresses / webhooks | ${index.addressCount.toLocaleString('en')} / ${index.webhookCount} (lists of ${PER_WEBHOOK}) | 1,000,000 / 1,000 |`,
    `| index build from 1,000 lists in memory (addresses generated before) | ${loadMs.toFixed(0)} ms | |`,
    `| RSS of the bench process: at start / with the 1M index (and the generated address strings) | ${mb(baseRss)} MB / ${mb(indexRss)} MB | ≤ 300 MB |`,
    `| decode-only floor (JSON parse + activities) | ${Math.round(floor.txPerS).toLocaleString('en')} tx/s | |`,
    `| matcher (parse + match + eventIds; ${BLOCKS} blocks × ${TXS_PER_BLOCK} tx, ${matched.out / 3} matches per pass) | ${Math.round(matched.txPerS).toLocaleString('en')} tx/s (${(matched.txPerS / floor.txPerS).toFixed(2)}× floor) | ≥ 100,000 tx/s, ≥ 0.5× |`,
    `| anvil block → job on WEBHOOK (fetch + CHAIN publish + match + record + publish), n=${lat.n} | p50 ${lat.p50.toFixed(1)} ms, p99 ${lat.p99.toFixed(1)} ms | p99 < 100 ms |`,
  ].join('\n');
}

if (require.main === module) {
  runBenchmark().then(
    (report) => {
      process.stdout.write(`${report}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`matcher bench failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
}
