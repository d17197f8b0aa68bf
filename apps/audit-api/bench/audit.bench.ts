import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAnvil } from '@meridian/testing';
import { compileSolidity, type Artifact } from '../scripts/solc';
import { parseAbi, parseEther, type Abi, type Address, type Hex } from 'viem';
import {
  rugPullResponseSchema,
  walletCheckResponseSchema,
} from '../src/wallet/audit-response.schemas';
import { startAuditApp, type AuditTestApp } from '../test/support/audit-app';
import { fixture, setUpDevnet, SUPPLY, type Devnet } from '../test/support/devnet';
import { InTestCredentialSource } from '../test/support/in-test-credentials';
import { deployRealWorldToken, REAL_WORLD_TOKENS } from './real-world-corpus';
import { THIRD_PARTY_TOKENS, thirdPartyArtifacts } from './third-party-corpus';
import { sourceOf, TOKEN_VARIANTS, type TokenVariant } from './token-corpus';

const KEY = 'bench-key';
const CONCURRENCY = 8;
const OWNER_ABI = parseAbi(['function setMarket(address)', 'function renounceOwnership()']);

interface Timing {
  readonly checksPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly n: number;
}

const counts = () => ({ tp: 0, fp: 0, fn: 0, tn: 0 });

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Runs `n` requests with CONCURRENCY in flight; every answer must be 200 and schema-valid. */
async function measure(n: number, request: (i: number) => Promise<void>): Promise<Timing> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < n; i = next++) {
        const t0 = performance.now();
        await request(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    checksPerSecond: n / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    n,
  };
}

const randomAddress = (i: number) =>
  `0x${createHash('sha256').update(`bench-${i}-${Date.now()}`).digest('hex').slice(0, 40)}`;

/** solc-js on the corpus takes a while on small machines: compiled once per source set, cached in the temp dir. */
function compileCorpus(): Record<string, Artifact> {
  const sources = Object.fromEntries(
    TOKEN_VARIANTS.map((variant) => [`${variant.name}.sol`, sourceOf(variant)]),
  );
  const hash = createHash('sha256').update(JSON.stringify(sources)).digest('hex').slice(0, 16);
  const cache = join(tmpdir(), `meridian-audit-bench-${hash}.json`);
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, 'utf8')) as Record<string, Artifact>;
  const artifacts = compileSolidity(sources);
  writeFileSync(cache, JSON.stringify(artifacts));
  return artifacts;
}

type CorpusSet = 'generated' | 'real-world' | 'third-party';

interface CorpusToken {
  variant: TokenVariant;
  address: Address;
  set: CorpusSet;
}

async function deployCorpus(
  devnet: Devnet,
  artifacts: Record<string, Artifact>,
): Promise<CorpusToken[]> {
  const out: CorpusToken[] = [];
  for (const variant of TOKEN_VARIANTS) {
    const artifact = artifacts[variant.name]!;
    const address = await devnet.deploy(artifact.abi as Abi, artifact.bytecode, [SUPPLY]);
    const pair = await devnet.addLiquidity(address, SUPPLY / 2n, parseEther('10'));
    await devnet.send(address, OWNER_ABI, 'setMarket', [pair]);
    if (variant.renounce) await devnet.send(address, OWNER_ABI, 'renounceOwnership', []);
    out.push({ variant, address, set: 'generated' });
  }
  // The scenario fixtures of the integration tests join the corpus.
  const scenario: Array<[string, boolean, boolean]> = [
    ['CleanToken', false, false],
    ['HoneypotToken', true, true],
    ['HiddenMintToken', true, false],
    // A declared blacklist of named holders: centralisation, not malice (ADR 0304).
    ['BlacklistToken', false, false],
    ['SellTaxToken', true, true],
  ];
  for (const [name, malicious, market] of scenario) {
    const f = fixture(name as 'CleanToken');
    const address = await devnet.deploy(f.abi, f.bytecode, [SUPPLY]);
    const pair = await devnet.addLiquidity(address, SUPPLY / 2n, parseEther('10'));
    if (market) await devnet.send(address, OWNER_ABI, 'setMarket', [pair]);
    out.push({
      variant: { name, features: [], renounce: false, malicious },
      address,
      set: 'generated',
    });
  }
  // Written by this project after the shapes of real-world contracts (canonical tokens, launch
  // anti-bot rules, scam patterns from published datasets and tutorials).
  for (const token of REAL_WORLD_TOKENS) {
    const f = fixture(token.contract as 'CleanToken') as { abi: Abi; bytecode: Hex };
    const address = await deployRealWorldToken(devnet, token, f, SUPPLY);
    out.push({
      variant: {
        name: token.contract,
        features: [],
        renounce: token.renounce,
        malicious: token.malicious,
      },
      address,
      set: 'real-world',
    });
  }
  // Written by others, verbatim from npm packages (bench/third-party-corpus.ts).
  const built = thirdPartyArtifacts();
  for (const token of THIRD_PARTY_TOKENS) {
    const address = await deployRealWorldToken(devnet, token, built[token.contract]!, SUPPLY);
    out.push({
      variant: { name: token.contract, features: [], renounce: false, malicious: token.malicious },
      address,
      set: 'third-party',
    });
  }
  return out;
}

export async function runBenchmark(): Promise<string> {
  const compileStarted = performance.now();
  const artifacts = compileCorpus();
  const compileSeconds = (performance.now() - compileStarted) / 1000;
  const anvil = await startAnvil({ chainId: 1 });
  let audit: AuditTestApp | undefined;
  try {
    const devnet = await setUpDevnet(anvil.url);
    const corpus = await deployCorpus(devnet, artifacts);
    const credentials = new InTestCredentialSource().add(KEY, {
      planId: 'enterprise',
      auditQuota: { checksPerDay: 1e9, requestsPerSecond: 1e6 },
    });
    audit = await startAuditApp(
      {
        AUDIT_RPC_URLS: JSON.stringify({ ETH: anvil.url }),
        AUDIT_DEX_ROUTERS: JSON.stringify({ ETH: [devnet.uniswap.router] }),
        AUDIT_VERDICT_TTL_MS: '0',
        // Tokens of one deployer are checked each on its own (a honeypot's creator would make
        // the others Fraud, ADR 0302 amendment).
        AUDIT_HONEYPOT_CREATOR_LINK: 'false',
      },
      { credentials },
    );
    const app = audit;
    const check = async (network: string, address: string) => {
      const response = await app.post('/v1/wallet-audit/check', { network, address }, KEY);
      if (response.status !== 200)
        throw new Error(
          `check ${network} ${address}: ${response.status} ${JSON.stringify(response.body)}`,
        );
      walletCheckResponseSchema.parse(response.body);
    };
    const sanctioned = '0x098b716b8aaf21512996dc57eb0615e2383e2f96';
    // Warm-up (JIT, pool connections), not measured.
    await measure(40, (i) => check('BNB', i % 2 ? sanctioned : randomAddress(i)));
    await measure(20, (i) => check('ETH', randomAddress(i)));
    const labelOnly = await measure(600, (i) =>
      check('BNB', i % 4 === 0 ? sanctioned : randomAddress(i)),
    );
    const holders = [devnet.deployer, ...corpus.map((c) => c.address)];
    const chainRead = await measure(300, (i) =>
      check('ETH', i % 5 === 0 ? holders[i % holders.length]! : randomAddress(i)),
    );

    const confusion = { generated: counts(), 'real-world': counts(), 'third-party': counts() };
    const misses: string[] = [];
    const errors: string[] = [];
    const rugStarted = performance.now();
    const rugLatencies: number[] = [];
    for (const { variant, address, set } of corpus) {
      const t0 = performance.now();
      const response = await app.post(
        '/v1/rug-pull/check',
        { network: 'ETH', contract_address: address },
        KEY,
      );
      rugLatencies.push(performance.now() - t0);
      if (response.status !== 200) {
        errors.push(
          `${variant.name} (${set}): ${response.status} ${JSON.stringify(response.body)}`,
        );
        continue;
      }
      const data = rugPullResponseSchema.parse(response.body).data;
      const predicted = data.risk_status !== 'Low Risk';
      const c = confusion[set];
      if (predicted && variant.malicious) c.tp += 1;
      else if (predicted) c.fp += 1;
      else if (variant.malicious) c.fn += 1;
      else c.tn += 1;
      if (predicted !== variant.malicious)
        misses.push(
          `${variant.name} (${set}, ${variant.malicious ? 'malicious' : 'benign'}, score ${data.risk_score})`,
        );
    }
    rugLatencies.sort((a, b) => a - b);
    const rugSeconds = (performance.now() - rugStarted) / 1000;
    const row = (name: string, t: Timing) =>
      `| ${name} | ${t.n} | ${t.checksPerSecond.toFixed(1)} | ${t.p50.toFixed(1)} | ${t.p99.toFixed(1)} |`;
    // A ratio over nothing (no malicious token, no alarm) is not a figure: shown as n/a.
    const ratio = (num: number, den: number) => (den === 0 ? 'n/a' : (num / den).toFixed(3));
    const rows = (['third-party', 'real-world', 'generated'] as const).map((set) => {
      const c = confusion[set];
      const errored = errors.filter((e) => e.includes(`(${set})`)).length;
      return `| ${set} | ${c.tp + c.fp + c.fn + c.tn + errored} | ${ratio(c.tp, c.tp + c.fp)} | ${ratio(c.tp, c.tp + c.fn)} | ${c.tp} | ${c.fp} | ${c.fn} | ${c.tn} | ${errored} |`;
    });
    return [
      `audit-api in-process (fastify inject, real Postgres, anvil as ETH), ${CONCURRENCY} requests in flight, verdict cache off.`,
      '',
      '| wallet check | requests | checks/s | p50 ms | p99 ms |',
      '|---|---|---|---|---|',
      row('label-only (BNB: no node, labels + sanction records)', labelOnly),
      row(
        'chain reads (ETH on anvil: code, nonce, balance, mixer + transfer logs, created contracts, age)',
        chainRead,
      ),
      '',
      `Rug pull checker on ${corpus.length} token contracts (${THIRD_PARTY_TOKENS.length} written by others, from npm packages; ${REAL_WORLD_TOKENS.length} real-world shapes and ${TOKEN_VARIANTS.length} generated variants + 5 scenario fixtures, written by this project; ${corpus.filter((c) => c.variant.malicious).length} malicious), predicted malicious = risk_status Medium or High (malice score, ADR 0304):`,
      '',
      '| corpus | tokens | precision | recall | TP | FP | FN | TN | errors |',
      '|---|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
      `Sequential checks: ${(corpus.length / rugSeconds).toFixed(1)}/s, p50 ${percentile(rugLatencies, 50).toFixed(0)} ms, p99 ${percentile(rugLatencies, 99).toFixed(0)} ms. Error answers: ${errors.length ? errors.join('; ') : 'none'}.`,
      '',
      misses.length ? `Misclassified: ${misses.join('; ')}.` : 'No misclassification.',
      `Corpus compile: ${compileSeconds.toFixed(1)} s (cached in ${tmpdir()} after the first run).`,
    ].join('\n');
  } finally {
    await audit?.close();
    await anvil.stop();
  }
}

// Run by bench/audit (as a child process): the report goes to stdout, everything else to stderr.
if (require.main === module) {
  runBenchmark().then(
    (report) => {
      process.stdout.write(`${report}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
