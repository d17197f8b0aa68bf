import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface Artifact {
  readonly abi: unknown[];
  /** Creation code, 0x-prefixed. */
  readonly bytecode: `0x${string}`;
  /** Runtime code, 0x-prefixed (what a state override places). */
  readonly deployedBytecode: `0x${string}`;
}

const NODE_MODULES = join(
  dirname(require.resolve('@openzeppelin/contracts/package.json')),
  '../..',
);

/**
 * Compiles Solidity sources with solc-js (the npm `solc` package, no native compiler), resolving
 * `@openzeppelin/…` and `@uniswap/…` imports from node_modules. Returns every contract by name.
 */
export function compileSolidity(
  sources: Record<string, string>,
  optimize = true,
): Record<string, Artifact> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const solc = require('solc') as {
    compile(
      input: string,
      options: { import: (path: string) => { contents: string } | { error: string } },
    ): string;
  };
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(
      Object.entries(sources).map(([name, content]) => [name, { content }]),
    ),
    settings: {
      optimizer: { enabled: optimize, runs: 200 },
      evmVersion: 'cancun',
      outputSelection: {
        '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] },
      },
    },
  };
  const findImport = (path: string) => {
    try {
      return { contents: readFileSync(join(NODE_MODULES, path), 'utf8') };
    } catch {
      return { error: `not found: ${path}` };
    }
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport })) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<
      string,
      Record<
        string,
        {
          abi: unknown[];
          evm: { bytecode: { object: string }; deployedBytecode: { object: string } };
        }
      >
    >;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const out: Record<string, Artifact> = {};
  for (const [file, contracts] of Object.entries(output.contracts)) {
    if (!(file in sources)) continue;
    for (const [name, contract] of Object.entries(contracts)) {
      if (contract.evm.bytecode.object)
        out[name] = {
          abi: contract.abi,
          bytecode: `0x${contract.evm.bytecode.object}`,
          deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
        };
    }
  }
  return out;
}
