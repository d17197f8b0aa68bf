import type { FilterNode } from '@meridian/webhooks';
import { patchChangesWebhook } from './webhook-patch';
import type { PatchedWebhookFields, WebhookRow } from './webhooks.repository';

const A = '0x' + 'ab'.repeat(20);
const filters = { address: { dir: 'out', in: [A], list_refs: [] } } as unknown as FilterNode;

const row = {
  name: 'ops',
  // jsonb hands an object's keys back in its own order
  filters: { address: { in: [A], list_refs: [], dir: 'out' } },
  addresses: [],
  list_refs: [],
  filter_tree: { address: { list_refs: [], dir: 'out', in: [A] } },
  inline_address_count: 1,
  confirm_depth: 96,
  phases: ['unconfirmed', 'confirmed'],
  target_url: 'https://hooks.example.com/in',
} as unknown as WebhookRow;

const same: PatchedWebhookFields = {
  name: 'ops',
  filters,
  addresses: [],
  listRefs: [],
  tree: filters,
  inlineAddresses: 1,
  confirmDepth: 96,
  phases: ['unconfirmed', 'confirmed'],
  targetUrl: 'https://hooks.example.com/in',
};

describe('patchChangesWebhook: whether a PATCH changes a stored field', () => {
  it('the fields as stored, filters with their keys in another order: no change', () => {
    expect(patchChangesWebhook(row, same)).toBe(false);
  });

  it('any one field given another value is a change; arrays keep their order', () => {
    const changes: Array<Partial<PatchedWebhookFields>> = [
      { name: null },
      { name: 'ops2' },
      { confirmDepth: 12 },
      { phases: ['confirmed', 'unconfirmed'] },
      { phases: ['confirmed'] },
      { targetUrl: 'https://hooks.example.com/in2' },
      { addresses: [A] },
      { listRefs: ['al_1'] },
      { filters: null },
      { tree: { address: { dir: 'to', in: [A], list_refs: [] } } as unknown as FilterNode },
      { inlineAddresses: 2 },
    ];
    for (const change of changes)
      expect([change, patchChangesWebhook(row, { ...same, ...change })]).toEqual([change, true]);
  });
});
