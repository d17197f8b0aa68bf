import { spawn, type ChildProcess } from 'node:child_process';
import { anvilBinaryPath } from '@meridian/platform-anvil';
import {
  createPublicClient,
  createTestClient,
  encodeFunctionData,
  http,
  keccak256,
  maxUint256,
  parseAbi,
  toHex,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import type { TradeFindings } from '../risk-score';

const ROUTER_ABI = parseAbi([
  'function WETH() view returns (address)',
  'function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[])',
  'function swapExactETHForTokensSupportingFeeOnTransferTokens(uint256 amountOutMin, address[] path, address to, uint256 deadline) payable',
  'function swapExactTokensForETHSupportingFeeOnTransferTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline)',
]);
const TOKEN_ABI = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'function transfer(address, uint256)',
  'function approve(address, uint256)',
]);
/** A wallet waits this long between its buy, its transfer and its sale, as a person would. */
const STEP_SECONDS = 60;
const DEADLINE = 2n ** 40n;

/** EIP-7825's cap on one transaction's gas (Osaka): a larger limit is refused where it holds. */
const MAX_TRANSACTION_GAS = 2n ** 24n;

/** Sessions a trade gets, each on a fresh fork node, before its failure is reported. */
const SESSIONS = 3;

/** Whether every step of a session went through (what another session cannot improve). */
function tradedCleanly(findings: TradeFindings): boolean {
  return findings.buyOk && findings.transferOk && findings.sellOk;
}

/**
 * Trades a token the way a real wallet does, on a fork of the chain: a buy, a transfer to
 * another wallet and a sale, each a real transaction in its own block a minute apart, sent from
 * plain accounts (not contracts). The one-call simulation buys and sells inside one transaction
 * in one block, which trips ordinary anti-bot rules (one trade per block, a sell cooldown, no
 * contracts); it is asked only to confirm a failed trade before the token is called a honeypot.
 *
 * One anvil process per forked node, started on first use (anvil is an npm dependency), reset to
 * the requested block for every trade, trades serialised; a trade that fails is run again on a
 * new node, up to SESSIONS sessions, before the failure is reported (a session that throws, or
 * one whose buy, transfer or sale failed).
 */
export class ForkSimulator {
  private node: Promise<{ child: ChildProcess; url: string }> | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly forkUrl: string) {}

  trade(
    token: Address,
    router: Address,
    value: bigint,
    blockNumber: bigint,
  ): Promise<TradeFindings> {
    const session = () => this.tradeOnFork(token, router, value, blockNumber);
    const run = this.queue.then(async () => {
      // A failed session is tried again on a fresh node: a fork node that died, stalled or
      // answered from state it failed to fetch (its upstream blipped on a loaded host) must not
      // leave a tradable token with the one-call honeypot finding. Only the last session's
      // failure is reported.
      for (let left = SESSIONS - 1; left > 0; left -= 1) {
        const findings = await session().catch(() => null);
        if (findings && tradedCleanly(findings)) return findings;
        await this.close();
      }
      return session();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    const node = await this.node?.catch(() => null);
    this.node = null;
    node?.child.kill('SIGKILL');
  }

  private start(): Promise<{ child: ChildProcess; url: string }> {
    if (this.node) return this.node;
    const node = new Promise<{ child: ChildProcess; url: string }>((resolve, reject) => {
      // `--no-mining`: the session mines each transaction itself (see tradeOnFork's `send`).
      const child = spawn(
        anvilBinaryPath(),
        ['--port', '0', '--no-mining', '--fork-url', this.forkUrl],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let output = '';
      const onData = (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-4_000);
        const match = /Listening on (127\.0\.0\.1:\d+)/.exec(output);
        if (match) {
          // Keep draining anvil's log (one line per transaction) so it never blocks on a full pipe.
          resolve({ child, url: `http://${match[1]}` });
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code) => {
        // A node killed by close() may exit after its successor started: forget only itself.
        if (this.node === node) this.node = null;
        reject(new Error(`fork node exited (${code}): ${output.trim().slice(-500)}`));
      });
      child.unref();
    });
    this.node = node;
    return node;
  }

  private async tradeOnFork(
    token: Address,
    router: Address,
    value: bigint,
    blockNumber: bigint,
  ): Promise<TradeFindings> {
    const { url } = await this.start();
    const transport = http(url, { timeout: 30_000 });
    const chain = createPublicClient({ transport }) as PublicClient;
    const test = createTestClient({ mode: 'anvil', transport });
    await test.reset({ jsonRpcUrl: this.forkUrl, blockNumber });
    // Every transaction is sent with all the gas one transaction may use, not with the node's
    // estimate: the node estimates in the latest block's environment (its timestamp), and the
    // session mines the transaction in a new block, a second or more later whenever the node's
    // upstream is remote or the host busy. A pair whose last trade is in the fork block's second
    // writes its price accumulators only then (44k gas more the first time), so the estimated
    // buy ran out of gas in the swap: a failure of our gas limit, not of the token.
    const { gasLimit } = await chain.getBlock();
    const gas = gasLimit < MAX_TRANSACTION_GAS ? gasLimit : MAX_TRANSACTION_GAS;
    // The node checks that the buyer can pay its fee cap (its gas price) on all of that gas. The
    // buyer holds twice today's price: the base fee only falls over the session's near-empty
    // blocks, and the tip the node adds may move.
    const fees = gas * (await chain.getGasPrice()) * 2n;
    const wallet = (label: string) =>
      `0x${keccak256(toHex(`meridian fork ${label} ${token}`)).slice(26)}` as Address;
    const buyer = wallet('buyer');
    const friend = wallet('friend');
    await test.impersonateAccount({ address: buyer });
    await test.setBalance({ address: buyer, value: value * 2n + 10n ** 18n + fees });

    // Each transaction is mined by the session, in a block of its own, and its receipt read once
    // the block is mined: nothing waits on the node's own mining and a block watcher, which could
    // miss a block mined between its first two looks and wait out its timeout on a loaded host.
    const send = async (to: Address, data: Hex, amount = 0n) => {
      const hash = (await chain.request({
        method: 'eth_sendTransaction',
        params: [{ from: buyer, to, data, value: toHex(amount), gas: toHex(gas) }],
      } as never)) as Hex;
      await test.mine({ blocks: 1 });
      // A transaction the mined block left out fails the session (then tried on a fresh node).
      const receipt = await chain.getTransactionReceipt({ hash });
      return { ok: receipt.status === 'success', gas: receipt.gasUsed * receipt.effectiveGasPrice };
    };
    const later = async () => {
      await test.increaseTime({ seconds: STEP_SECONDS });
      await test.mine({ blocks: 1 });
    };
    const balance = (who: Address) =>
      chain.readContract({
        address: token,
        abi: TOKEN_ABI,
        functionName: 'balanceOf',
        args: [who],
      });
    const quote = (amount: bigint, path: Address[]) =>
      chain
        .readContract({
          address: router,
          abi: ROUTER_ABI,
          functionName: 'getAmountsOut',
          args: [amount, path],
        })
        .then(
          (amounts) => amounts[amounts.length - 1] ?? 0n,
          () => 0n,
        );

    const weth = await chain.readContract({
      address: router,
      abi: ROUTER_ABI,
      functionName: 'WETH',
    });
    const expectedBuy = await quote(value, [weth, token]);
    const before = await balance(buyer);
    const buy = await send(
      router,
      encodeFunctionData({
        abi: ROUTER_ABI,
        functionName: 'swapExactETHForTokensSupportingFeeOnTransferTokens',
        args: [0n, [weth, token], buyer, DEADLINE],
      }),
      value,
    );
    const bought = (await balance(buyer)) - before;
    const ratio = (expected: bigint, actual: bigint) =>
      expected > 0n ? 1 - Number((actual * 1_000_000n) / expected) / 1_000_000 : null;
    if (!buy.ok || bought <= 0n)
      return {
        buyOk: false,
        transferOk: false,
        sellOk: false,
        sellAllOk: false,
        buyTax: null,
        sellTax: null,
        transferTax: null,
      };

    await later();
    const sent = bought / 10n;
    const friendBefore = await balance(friend);
    const transfer = await send(
      token,
      encodeFunctionData({ abi: TOKEN_ABI, functionName: 'transfer', args: [friend, sent] }),
    );
    const received = (await balance(friend)) - friendBefore;
    await later();
    await send(
      token,
      encodeFunctionData({ abi: TOKEN_ABI, functionName: 'approve', args: [router, maxUint256] }),
    );
    await later();

    const sell = async (amount: bigint) => {
      const expected = await quote(amount, [token, weth]);
      const ethBefore = await chain.getBalance({ address: buyer });
      const result = await send(
        router,
        encodeFunctionData({
          abi: ROUTER_ABI,
          functionName: 'swapExactTokensForETHSupportingFeeOnTransferTokens',
          args: [amount, 0n, [token, weth], buyer, DEADLINE],
        }),
      );
      const sold = (await chain.getBalance({ address: buyer })) - ethBefore + result.gas;
      return { ok: result.ok, tax: result.ok ? ratio(expected, sold) : null };
    };
    const held = await balance(buyer);
    let sale = await sell(held);
    const sellAllOk = sale.ok;
    if (!sale.ok) sale = await sell(held / 2n);
    return {
      buyOk: true,
      transferOk: transfer.ok && received > 0n,
      sellOk: sale.ok,
      sellAllOk,
      buyTax: ratio(expectedBuy, bought),
      sellTax: sale.tax,
      transferTax: transfer.ok && received > 0n ? ratio(sent, received) : null,
    };
  }
}
