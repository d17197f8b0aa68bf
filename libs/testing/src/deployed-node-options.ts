import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');

/** The manifest under `deploy/base` that runs each app (its Deployment or StatefulSet). */
export const APP_MANIFESTS: Readonly<Record<string, string>> = {
  'rpc-gateway': 'deploy/base/rpc-gateway/deployment.yaml',
  'billing-ledger': 'deploy/base/core/billing-ledger.yaml',
  'chain-indexer': 'deploy/base/core/chain-indexer.yaml',
  'webhook-matcher': 'deploy/base/core/webhook-matcher.yaml',
  'delivery-worker': 'deploy/base/core/delivery-worker.yaml',
  'audit-api': 'deploy/base/core/audit-api.yaml',
};

/**
 * The NODE_OPTIONS an app's manifest runs it with (its V8 heap sizes), or `undefined` when the
 * manifest sets none (or the app has no manifest here). The benches run the app with them, so
 * it behaves as it does in production; the manifest is the one source.
 */
export function deployedNodeOptions(app: string): string | undefined {
  const manifest = APP_MANIFESTS[app];
  if (manifest === undefined) return undefined;
  const text = readFileSync(join(ROOT, manifest), 'utf8');
  return /- name: NODE_OPTIONS\n\s+value: (.+)\n/.exec(text)?.[1]?.trim();
}
