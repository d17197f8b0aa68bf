import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Subjects } from '@meridian/contracts';
import { NatsNamespace } from '@meridian/platform-messaging';
import { connect } from '@nats-io/transport-node';
import { flatness, flatnessText, quantile, renderSoak, Sampler } from './sampler';

/**
 * Matcher soak (issue 18): the real webhook-matcher app holding 1,000,000 watched addresses
 * (1,000 lists × 1,000, the matcher bench's fixtures, loaded from Postgres) behind the real
 * chain-indexer on an anvil devnet (apps/webhook-matcher/bench/soak-stack-main.ts, a child
 * process). Every SOAK_BLOCK_MS (400) one block is mined holding four transfers: two to
 * addresses of two lists (a different list each time), one to the latency webhook's address,
 * one to an address nobody watches. Jobs are counted on the WEBHOOK subject (core NATS
 * subscription); block → job = evm_mine returned → the block's first unconfirmed job arrived.
 */
const ROOT = join(__dirname, '..', '..');
const BLOCK_MS = Number(process.env['SOAK_BLOCK_MS'] ?? 400);
const LOST_AFTER_MS = 10_000;

interface Stack {
  matcherPid: number;
  indexerPid: number;
  anvilUrl: string;
  natsUrl: string;
  natsPrefix: string;
  addresses: number;
  webhooks: number;
  loadMs: number;
  watched: string;
  listAddresses: string[];
}

async function rpc(
  url: string,
  calls: { method: string; params: unknown[] }[],
): Promise<unknown[]> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map((c, i) => ({ jsonrpc: '2.0', id: i + 1, ...c }))),
  });
  const answers = (await response.json()) as { id: number; result?: unknown; error?: unknown }[];
  const failed = answers.find((a) => a.error);
  if (failed) throw new Error(`devnet: ${JSON.stringify(failed.error)}`);
  return answers.sort((a, b) => a.id - b.id).map((a) => a.result);
}

function startStack(log: (line: string) => void) {
  const child = spawn(
    process.execPath,
    ['-r', '@swc-node/register', join(ROOT, 'apps/webhook-matcher/bench/soak-stack-main.ts')],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<Stack>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('{"stack"')) resolve((JSON.parse(line) as { stack: Stack }).stack);
      else log(`[matcher stack] ${line}`);
    });
    child.once('exit', (code) => reject(new Error(`matcher soak stack exited (${code})`)));
  });
  return {
    ready,
    async stop() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

interface Minute {
  blocks: number;
  unconfirmed: number;
  confirmed: number;
  latencies: number[];
  lost: number;
}

export async function soakMatcher(minutes: number, log: (line: string) => void): Promise<string> {
  const stack = startStack(log);
  try {
    const s = await stack.ready;
    log(
      `matcher soak: ${s.addresses} addresses / ${s.webhooks} webhooks loaded in ${(s.loadMs / 1000).toFixed(1)} s; a block every ${BLOCK_MS} ms for ${minutes} min`,
    );
    const nc = await connect({ servers: s.natsUrl });
    const ns = new NatsNamespace(s.natsPrefix);
    const sampler = new Sampler([s.matcherPid]);
    const rows: Minute[] = Array.from({ length: minutes }, () => ({
      blocks: 0,
      unconfirmed: 0,
      confirmed: 0,
      latencies: [],
      lost: 0,
    }));
    const minuteNow = () => Math.min(minutes - 1, Math.floor(sampler.elapsedS() / 60));
    /** Block number (hex) → when its first unconfirmed job arrived. */
    const arrived = new Map<string, number>();
    let chainBlocks = 0;
    let otherErrors = 0;
    const jobs = nc.subscribe(ns.subject(Subjects.webhook.deliveryJob.all), {
      callback: (error, m) => {
        if (error) return void (otherErrors += 1);
        const job = m.json<{ phase: string; payload: { block: { number: string } } }>();
        const row = rows[minuteNow()]!;
        if (job.phase === 'unconfirmed') {
          row.unconfirmed += 1;
          if (!arrived.has(job.payload.block.number))
            arrived.set(job.payload.block.number, performance.now());
        } else row.confirmed += 1;
      },
    });
    const chain = nc.subscribe(ns.subject(Subjects.chain.block.all), {
      callback: () => void (chainBlocks += 1),
    });

    let head = Number.parseInt(
      (await rpc(s.anvilUrl, [{ method: 'eth_blockNumber', params: [] }]))[0] as string,
      16,
    );
    const mined: { number: string; at: number; minute: number }[] = [];
    const from = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
    const transfer = (to: string) => ({
      method: 'eth_sendTransaction',
      params: [{ from, to, value: '0x1' }],
    });
    sampler.start();
    const startedAt = performance.now();
    const endAt = startedAt + minutes * 60_000;
    for (let k = 0; ; k++) {
      const due = startedAt + k * BLOCK_MS;
      if (due >= endAt) break;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const lists = s.listAddresses;
      // One call each: anvil gives the transactions of one batch from one sender the same nonce.
      for (const to of [
        lists[(2 * k) % lists.length]!,
        lists[(2 * k + 1) % lists.length]!,
        s.watched,
        `0x${randomBytes(20).toString('hex')}`,
      ])
        await rpc(s.anvilUrl, [transfer(to)]);
      await rpc(s.anvilUrl, [{ method: 'evm_mine', params: [] }]);
      head += 1;
      const minute = minuteNow();
      rows[minute]!.blocks += 1;
      mined.push({ number: `0x${head.toString(16)}`, at: performance.now(), minute });
      if (k > 0 && k % Math.round(60_000 / BLOCK_MS) === 0)
        log(
          `matcher soak minute ${minute}: ${rows[minute - 1]?.unconfirmed} unconfirmed jobs, RSS ${sampler.samples.at(-1)!.rssMiB.toFixed(0)} MiB, fds ${sampler.samples.at(-1)!.fds}`,
        );
    }
    sampler.stop();
    await new Promise((r) => setTimeout(r, LOST_AFTER_MS));
    jobs.unsubscribe();
    chain.unsubscribe();
    await nc.close();
    for (const b of mined) {
      const at = arrived.get(b.number);
      if (at === undefined || at - b.at > LOST_AFTER_MS) rows[b.minute]!.lost += 1;
      else rows[b.minute]!.latencies.push(at - b.at);
    }

    const f = flatness(sampler);
    const lost = rows.reduce((n, r) => n + r.lost, 0);
    const blocks = mined.length;
    const perMinute = 60_000 / BLOCK_MS;
    const paced = rows.every((r) => r.blocks >= perMinute * 0.95);
    const steady = lost === 0 && otherErrors === 0 && paced;
    const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : 'n/a');
    return renderSoak({
      title: `matcher, ${minutes} min, ${s.addresses.toLocaleString('en')} watched addresses`,
      method: `The real webhook-matcher app (${s.addresses.toLocaleString('en')} addresses in ${s.webhooks.toLocaleString('en')} webhooks, loaded from Postgres in ${(s.loadMs / 1000).toFixed(1)} s) behind the real chain-indexer on anvil; one block every ${BLOCK_MS} ms, each with 4 transfers (2 to addresses of two lists, a different pair each block; 1 to the latency webhook's address; 1 unwatched). Jobs counted on the WEBHOOK subject; block → job from evm_mine returning to the block's first unconfirmed job (p50 / p99 of the blocks mined in that minute). The list webhooks take both phases, so from the 13th block on each block also brings 2 confirmed jobs.`,
      columns: [
        'blocks mined',
        'jobs published (unconfirmed + confirmed)',
        'block → job p50 ms',
        'p99 ms',
        'blocks without a job in 10 s',
      ],
      minutes: rows.map((r) => [
        String(r.blocks),
        `${r.unconfirmed + r.confirmed} (${r.unconfirmed} + ${r.confirmed})`,
        ms(quantile(r.latencies, 0.5)),
        ms(quantile(r.latencies, 0.99)),
        String(r.lost),
      ]),
      sampler,
      processes: 'webhook-matcher app (1 process)',
      verdict: `Verdict: ${flatnessText(f)}; stream **${steady ? 'steady' : 'NOT steady'}**: ${blocks.toLocaleString('en')} blocks mined, ${chainBlocks.toLocaleString('en')} published by the indexer, ${lost} without their job within 10 s (must be 0), every minute at ≥ 95 % of ${perMinute} blocks: ${paced ? 'yes' : 'no'}.`,
    });
  } finally {
    await stack.stop();
  }
}
