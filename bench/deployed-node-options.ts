import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');

/**
 * The NODE_OPTIONS a manifest under `deploy/` runs an app with (its V8 heap sizes), so a bench
 * measures the process as it runs in production. Throws when the manifest sets none.
 */
export function deployedNodeOptions(manifest: string): string {
  const text = readFileSync(join(ROOT, manifest), 'utf8');
  const match = /- name: NODE_OPTIONS\n\s+value: (.+)\n/.exec(text);
  if (!match) throw new Error(`${manifest} sets no NODE_OPTIONS`);
  return match[1]!.trim();
}
