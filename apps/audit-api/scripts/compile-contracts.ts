import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { compileSolidity } from './solc';

/**
 * Regenerates the committed artifacts (solc-js on two shared cores is too slow to compile
 * OpenZeppelin on every test run):
 *   node -r @swc-node/register apps/audit-api/scripts/compile-contracts.ts
 * - src/rug-pull/simulator/token-probe.artifact.json (runtime code placed by state override)
 * - test/fixtures/contracts/artifacts.json (scenario tokens deployed on anvil)
 */
function compileDir(dir: string, only?: string[]): Record<string, unknown> {
  const sources: Record<string, string> = {};
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.sol')))
    sources[file] = readFileSync(join(dir, file), 'utf8');
  const artifacts = compileSolidity(sources);
  return Object.fromEntries(
    Object.entries(artifacts).filter(([name]) => !only || only.includes(name)),
  );
}

async function main(): Promise<void> {
  const app = join(__dirname, '..');
  // Written already formatted (with the repo's prettier config), so `prettier --check` passes.
  const write = async (path: string, value: unknown) =>
    writeFileSync(
      path,
      await format(JSON.stringify(value), { ...(await resolveConfig(path)), filepath: path }),
    );
  const probe = compileDir(join(app, 'src/rug-pull/simulator'), [
    'TokenProbe',
    'ProbeHolder',
    'ProbeTrader',
    'ProbeNewborn',
  ]);
  await write(join(app, 'src/rug-pull/simulator/token-probe.artifact.json'), probe);
  const fixtures = compileDir(join(app, 'test/fixtures/contracts'), [
    'CleanToken',
    'HoneypotToken',
    'HiddenMintToken',
    'BlacklistToken',
    'SellTaxToken',
    'UpgradeableTokenLogic',
    'UpgradeableToken',
    'MockTornadoPool',
    // Real-world shapes (RealWorldBenign.sol, RealWorldScams.sol).
    'TetherLikeToken',
    'WETH9Like',
    'DaiLike',
    'UniLike',
    'MinterPauserToken',
    'OneTradePerBlockToken',
    'SellCooldownToken',
    'NoWalletTransferToken',
    'SilentTransferToken',
    'WhitelistSellToken',
    'HiddenAdminFeeToken',
    'ArrayBotListToken',
    'RenouncedTaxWalletToken',
    'MaxTxTrapToken',
    // tx.origin (RealWorldTxOrigin.sol).
    'OriginSellTrapToken',
    'CodelessBuyerTrapToken',
    'OriginExemptFeeToken',
    'OriginOnlyTradeToken',
    'CodelessSellTrapToken',
    'ContractSellerBlockToken',
    // Holders who cannot pass tokens on, without a pool (HolderTransfers.sol).
    'OwnerOnlyTransferToken',
    'LaunchLockedToken',
  ]);
  await write(join(app, 'test/fixtures/contracts/artifacts.json'), fixtures);
  process.stdout.write(
    `compiled ${Object.keys(probe).length + Object.keys(fixtures).length} contracts\n`,
  );
}

void main();
