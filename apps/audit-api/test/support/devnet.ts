import {
  createPublicClient,
  createWalletClient,
  http,
  parseAbi,
  parseEther,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import fixtures from '../fixtures/contracts/artifacts.json';

/**
 * A JSON-RPC call to the devnet that must succeed (anvil's own methods included: impersonation,
 * time): its error is thrown, naming the method.
 */
export async function devnetRpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const answer = (await (
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    })
  ).json()) as { result?: unknown; error?: unknown };
  if (answer.error !== undefined)
    throw new Error(`${method} failed: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

/** anvil's first default account (public test mnemonic). */
export const DEPLOYER_KEY =
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as Hex;

interface Built {
  abi: Abi;
  bytecode: string;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const npmArtifact = (path: string): Built => require(path) as Built;
export const fixture = (name: keyof typeof fixtures) =>
  fixtures[name] as unknown as { abi: Abi; bytecode: Hex; deployedBytecode: Hex };

const ERC20_ABI = parseAbi(['function approve(address, uint256) returns (bool)']);
const ROUTER_ABI = parseAbi([
  'function addLiquidityETH(address token, uint amountTokenDesired, uint amountTokenMin, uint amountETHMin, address to, uint deadline) payable returns (uint, uint, uint)',
]);
const FACTORY_ABI = parseAbi(['function getPair(address, address) view returns (address)']);

export interface Devnet {
  readonly publicClient: PublicClient;
  readonly wallet: WalletClient;
  readonly deployer: Address;
  deploy(abi: Abi, bytecode: Hex, args?: readonly unknown[]): Promise<Address>;
  send(
    to: Address,
    abi: Abi,
    functionName: string,
    args: readonly unknown[],
    value?: bigint,
  ): Promise<void>;
  uniswap: { weth: Address; factory: Address; router: Address };
  /** Adds token/WETH liquidity from the deployer and returns the pair. */
  addLiquidity(token: Address, tokenAmount: bigint, ethAmount: bigint): Promise<Address>;
}

export async function setUpDevnet(url: string): Promise<Devnet> {
  const account = privateKeyToAccount(DEPLOYER_KEY);
  const publicClient = createPublicClient({ transport: http(url) }) as PublicClient;
  const wallet = createWalletClient({ account, transport: http(url) });
  const chain = {
    id: await publicClient.getChainId(),
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  };
  const deploy = async (
    abi: Abi,
    bytecode: Hex,
    args: readonly unknown[] = [],
  ): Promise<Address> => {
    const hash = await wallet.deployContract({ abi, bytecode, args, account, chain });
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (!receipt.contractAddress || receipt.status !== 'success') throw new Error('deploy failed');
    return receipt.contractAddress;
  };
  const send = async (
    to: Address,
    abi: Abi,
    functionName: string,
    args: readonly unknown[],
    value?: bigint,
  ) => {
    const hash = await wallet.writeContract({
      address: to,
      abi,
      functionName,
      args,
      account,
      chain,
      value,
    } as never);
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status !== 'success') throw new Error(`${functionName} reverted`);
  };
  const hex = (b: string) => (b.startsWith('0x') ? b : `0x${b}`) as Hex;
  const wethArt = npmArtifact('@uniswap/v2-periphery/build/WETH9.json');
  const factoryArt = npmArtifact('@uniswap/v2-core/build/UniswapV2Factory.json');
  const routerArt = npmArtifact('@uniswap/v2-periphery/build/UniswapV2Router02.json');
  const weth = await deploy(wethArt.abi, hex(wethArt.bytecode));
  const factory = await deploy(factoryArt.abi, hex(factoryArt.bytecode), [account.address]);
  const router = await deploy(routerArt.abi, hex(routerArt.bytecode), [factory, weth]);
  return {
    publicClient,
    wallet,
    deployer: account.address,
    deploy,
    send,
    uniswap: { weth, factory, router },
    async addLiquidity(token, tokenAmount, ethAmount) {
      await send(token, ERC20_ABI, 'approve', [router, tokenAmount]);
      await send(
        router,
        ROUTER_ABI,
        'addLiquidityETH',
        [token, tokenAmount, 0n, 0n, account.address, 2n ** 40n],
        ethAmount,
      );
      return publicClient.readContract({
        address: factory,
        abi: FACTORY_ABI,
        functionName: 'getPair',
        args: [token, weth],
      });
    },
  };
}

export const SUPPLY = parseEther('1000000');
