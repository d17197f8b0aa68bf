import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

const PLATFORM_PACKAGES: Record<string, string> = {
  'linux-x64': '@foundry-rs/anvil-linux-amd64',
  'linux-arm64': '@foundry-rs/anvil-linux-arm64',
  'darwin-x64': '@foundry-rs/anvil-darwin-amd64',
  'darwin-arm64': '@foundry-rs/anvil-darwin-arm64',
  'win32-x64': '@foundry-rs/anvil-win32-amd64',
};

/**
 * The anvil binary shipped by the npm package @foundry-rs/anvil (its platform package), the same
 * lookup its own launcher does, without a global foundry install.
 */
export function anvilBinaryPath(): string {
  const binary = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  const platformPackage = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
  const candidates: string[] = [];
  if (platformPackage !== undefined) {
    try {
      candidates.push(require.resolve(`${platformPackage}/bin/${binary}`));
    } catch {
      // optional dependency not installed for this platform; try the launcher's fallback
    }
  }
  try {
    candidates.push(
      join(dirname(require.resolve('@foundry-rs/anvil/package.json')), 'dist', binary),
    );
  } catch {
    // launcher package missing too; reported below
  }
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found === undefined) {
    throw new Error(
      `anvil binary not found for ${process.platform}-${process.arch}; run npm install (looked in ${candidates.join(', ') || 'no package'})`,
    );
  }
  return found;
}
