import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseAbi, parseEther, type Abi, type Hex } from 'viem';
import { compileSolidity } from '../scripts/solc';
import type { RealWorldToken } from './real-world-corpus';

/**
 * Tokens written by others, taken verbatim from npm packages (devDependencies pinned in the root
 * package.json; nothing of them is copied into this repository): the build artifacts their authors
 * published, or their sources compiled here with the pinned `solc` npm package. Ground truth is
 * what each token is known to be. No published honeypot or rug pull token with its source is on
 * the npm registry that we could find, so this row has no malicious token: it measures false
 * alarms only (see bench/README.md "audit").
 */
export interface ThirdPartyToken extends RealWorldToken {
  /** Where the code comes from: npm package and path, and who wrote it. */
  readonly origin: string;
  /** A build artifact shipped in the package, or a source compiled here. */
  readonly build:
    | { readonly artifact: string }
    | { readonly source: string; readonly name: string; readonly optimize: boolean };
}

const OZ4 = '@openzeppelin/contracts-v4/token/ERC20/presets';
const WEIRD = 'weird-erc20/contracts';
const YEAR = 365n * 24n * 3600n;

const MINT_ABI = parseAbi(['function mint(address, uint256)']);

type Options = Partial<Pick<ThirdPartyToken, 'pool' | 'args' | 'setUp' | 'renounce' | 'market'>>;

const token = (
  contract: string,
  origin: string,
  build: ThirdPartyToken['build'],
  pattern: string,
  options: Options = {},
): ThirdPartyToken => ({
  contract,
  origin,
  build,
  pattern,
  malicious: false,
  pool: options.pool ?? true,
  market: false,
  renounce: false,
  args: options.args,
  setUp: options.setUp,
});

/** weird-erc20's tokens, compiled without the optimiser (as its tests build them). */
const weird = (
  contract: string,
  file: string,
  pattern: string,
  options: Options & { name?: string } = {},
) =>
  token(
    contract,
    `weird-erc20@1.0.1 contracts/${file}.sol (d-xo and contributors, AGPL-3.0-only; modelled on real tokens)`,
    { source: `${WEIRD}/${file}.sol`, name: options.name ?? contract, optimize: false },
    pattern,
    options,
  );

export const THIRD_PARTY_TOKENS: readonly ThirdPartyToken[] = [
  token(
    'WETH9',
    '@uniswap/v2-periphery@1.1.0-beta.0 build/WETH9.json (Dapphub WETH9, as Uniswap built it)',
    { artifact: '@uniswap/v2-periphery/build/WETH9.json' },
    'canonical WETH: deposit/withdraw of one’s own ether, no owner',
    { pool: false, args: () => [] },
  ),
  token(
    'UniswapV2ERC20',
    '@uniswap/v2-core@1.0.1 build/ERC20.json (Uniswap: UniswapV2ERC20 with a fixed supply)',
    { artifact: '@uniswap/v2-core/build/ERC20.json' },
    'Uniswap V2 LP token code (permit), fixed supply, no owner',
  ),
  token(
    'DeflatingERC20',
    '@uniswap/v2-periphery@1.1.0-beta.0 build/DeflatingERC20.json (Uniswap test token)',
    { artifact: '@uniswap/v2-periphery/build/DeflatingERC20.json' },
    'fee on transfer: 1 % burnt on every transfer, no owner',
  ),
  token(
    'Uni',
    '@uniswap/governance@1.0.2 build/Uni.json (Uniswap: the UNI token)',
    { artifact: '@uniswap/governance/build/Uni.json' },
    'UNI: a minter limited to 2 % a year after a time lock, delegation',
    {
      args: ({ deployer, now }) => [deployer, deployer, now + YEAR],
    },
  ),
  token(
    'ERC20PresetFixedSupply',
    '@openzeppelin/contracts@4.9.6 token/ERC20/presets/ERC20PresetFixedSupply.sol (OpenZeppelin)',
    { source: `${OZ4}/ERC20PresetFixedSupply.sol`, name: 'ERC20PresetFixedSupply', optimize: true },
    'OpenZeppelin preset: fixed supply, burnable, no owner',
    { args: ({ deployer, supply }) => ['Fixed', 'FIX', supply, deployer] },
  ),
  token(
    'ERC20PresetMinterPauser',
    '@openzeppelin/contracts@4.9.6 token/ERC20/presets/ERC20PresetMinterPauser.sol (OpenZeppelin)',
    {
      source: `${OZ4}/ERC20PresetMinterPauser.sol`,
      name: 'ERC20PresetMinterPauser',
      optimize: true,
    },
    'OpenZeppelin preset: MINTER_ROLE mints, PAUSER_ROLE pauses everyone (AccessControl)',
    {
      args: () => ['MinterPauser', 'MP'],
      setUp: async (devnet, address, supply) =>
        devnet.send(address, MINT_ABI as Abi, 'mint', [devnet.deployer, supply]),
    },
  ),
  weird('MissingReturnToken', 'MissingReturns', 'transfer/approve return nothing (USDT, BNB, OMG)'),
  weird('ReturnsFalseToken', 'ReturnsFalse', 'transfer returns false on success (ZRX-like)', {
    // Uniswap's TransferHelper refuses a `false`: no pool can be made with it.
    pool: false,
  }),
  weird('NoRevertToken', 'NoRevert', 'failing transfers return false instead of reverting', {
    pool: false,
  }),
  weird('TransferFeeToken', 'TransferFee', 'fixed fee of 1 token per transfer (STA, PAXG)', {
    args: ({ supply }) => [supply, parseEther('1')],
  }),
  weird('BlockableToken', 'BlockList', 'an admin blocks named addresses (USDC, USDT)'),
  weird('PausableToken', 'Pausable', 'an admin pauses every transfer (BNB, ZIL)'),
  weird('ReentrantToken', 'Reentrant', 'a transfer calls a target the sender set (ERC777 hooks)'),
  weird('ApprovalRaceToken', 'Approval', 'approve from non-zero to non-zero reverts (USDT, KNC)'),
  weird('ApprovalToZeroToken', 'ApprovalToZero', 'approve of the zero address reverts (OZ)'),
  weird('RevertZeroToken', 'RevertZero', 'a zero-value transfer reverts (LEND)'),
  weird('HighDecimalToken', 'HighDecimals', '24 decimals (YAM-V2)'),
  weird('LowDecimalToken', 'LowDecimals', '2 decimals (GUSD)'),
  weird(
    'TransferFromSelfToken',
    'TransferFromSelf',
    'transferFrom by the owner needs no allowance (DSToken)',
  ),
  weird('Bytes32MetadataToken', 'Bytes32Metadata', 'name and symbol as bytes32 (MKR)', {
    name: 'ERC20',
  }),
  weird('Uint96Token', 'Uint96', 'balances and amounts as uint96 (UNI, COMP)', { name: 'ERC20' }),
];

/** solc-js on two shared cores is slow: each set of sources is compiled once and cached in the temp dir. */
function compileCached(sources: Record<string, string>, optimize: boolean) {
  const hash = createHash('sha256')
    .update(JSON.stringify({ sources, optimize }))
    .digest('hex')
    .slice(0, 16);
  const cache = join(tmpdir(), `meridian-audit-third-party-${hash}.json`);
  if (existsSync(cache))
    return JSON.parse(readFileSync(cache, 'utf8')) as ReturnType<typeof compileSolidity>;
  const artifacts = compileSolidity(sources, optimize);
  writeFileSync(cache, JSON.stringify(artifacts));
  return artifacts;
}

const packageFile = (path: string) => {
  const [scopeOrName, maybeName] = path.split('/');
  const pkg = scopeOrName!.startsWith('@') ? `${scopeOrName}/${maybeName}` : scopeOrName!;
  const root = dirname(require.resolve(`${pkg}/package.json`));
  return join(root, path.slice(pkg.length + 1));
};

/** One contract of an npm package's source, compiled with the pinned solc (cached in the temp dir). */
export function compileFromPackage(
  source: string,
  name: string,
  optimize: boolean,
): { abi: Abi; bytecode: Hex } {
  const compiled = compileCached({ [source]: readFileSync(packageFile(source), 'utf8') }, optimize);
  const artifact = compiled[name];
  if (!artifact) throw new Error(`${source}: no contract ${name}`);
  return { abi: artifact.abi as Abi, bytecode: artifact.bytecode };
}

/** The creation code and ABI of each token: the published artifact, or its source compiled here. */
export function thirdPartyArtifacts(): Record<string, { abi: Abi; bytecode: Hex }> {
  const out: Record<string, { abi: Abi; bytecode: Hex }> = {};
  for (const t of THIRD_PARTY_TOKENS) {
    if ('artifact' in t.build) {
      const built = JSON.parse(readFileSync(packageFile(t.build.artifact), 'utf8')) as {
        abi: Abi;
        bytecode: string;
      };
      const hex = built.bytecode.startsWith('0x') ? built.bytecode : `0x${built.bytecode}`;
      out[t.contract] = { abi: built.abi, bytecode: hex as Hex };
    } else {
      // One source per compilation: several weird-erc20 files each declare their own `ERC20`.
      out[t.contract] = compileFromPackage(t.build.source, t.build.name, t.build.optimize);
    }
  }
  return out;
}
