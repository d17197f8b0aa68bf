import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { APP_MANIFESTS, deployedNodeOptions } from './deployed-node-options';

const ROOT = resolve(__dirname, '../../..');

describe('deployedNodeOptions', () => {
  it("answers the value of the manifest's NODE_OPTIONS entry, or undefined when it sets none", () => {
    for (const [app, manifest] of Object.entries(APP_MANIFESTS)) {
      const text = readFileSync(join(ROOT, manifest), 'utf8');
      const sets = text.includes('- name: NODE_OPTIONS');
      const options = deployedNodeOptions(app);
      if (sets) {
        expect(options).toMatch(/^--\S/);
        expect(text).toContain(`value: ${options}`);
      } else expect(options).toBeUndefined();
    }
  });

  it('reads the heap sizes the gateway, the delivery worker and the ledger are deployed with', () => {
    expect(deployedNodeOptions('rpc-gateway')).toMatch(/--max-semi-space-size=\d+/);
    expect(deployedNodeOptions('delivery-worker')).toMatch(/--max-semi-space-size=\d+/);
    expect(deployedNodeOptions('billing-ledger')).toBe('--max-semi-space-size=64');
  });

  it('names a manifest that exists and runs that app for every app it knows', () => {
    for (const [app, manifest] of Object.entries(APP_MANIFESTS)) {
      expect(existsSync(join(ROOT, manifest))).toBe(true);
      expect(readFileSync(join(ROOT, manifest), 'utf8')).toMatch(
        new RegExp(`- name: APP\\n\\s+value: ${app}\\n`),
      );
    }
    expect(deployedNodeOptions('dashboard')).toBeUndefined();
  });
});
