import {
  type EditedWebhook,
  changedFields,
  colleagueChanges,
  formValuesOf,
  ifMatch,
  isVersionMismatch,
  patchBody,
  reapply,
  txHashesOf,
} from './webhook-edit';

const A = '0x1111111111111111111111111111111111111111';
const B = '0x2222222222222222222222222222222222222222';
const C = '0x3333333333333333333333333333333333333333';

const webhook = (over: Partial<EditedWebhook> = {}): EditedWebhook => ({
  name: 'Treasury',
  filters: null,
  addresses: [A],
  list_refs: ['al_1'],
  confirm_depth: 12,
  phases: ['unconfirmed', 'confirmed'],
  target_url: 'https://hooks.example.com/a',
  ...over,
});

describe('the edit form against the version it loaded (QA QQ, Medium 1)', () => {
  const loaded = formValuesOf(webhook());

  it('sends only the name when only the name changed (was: every field, reverting others)', () => {
    expect(patchBody(loaded, { ...loaded, name: 'Treasury (ops)' }, false)).toEqual({
      name: 'Treasury (ops)',
    });
  });

  it('sends nothing when nothing changed in meaning (blank space, order of a set, case)', () => {
    const same = {
      ...loaded,
      name: ' Treasury ',
      addresses: `${A.toUpperCase().replace('0X', '0x')}\n`,
      listRefs: ['al_1'],
      phases: ['confirmed', 'unconfirmed'],
      depth: '12 ',
    };
    expect(changedFields(loaded, same)).toEqual([]);
    expect(patchBody(loaded, same, false)).toEqual({});
  });

  it('writes each changed field in the API names, a cleared name as null', () => {
    const typed = {
      ...loaded,
      name: '',
      targetUrl: ' https://hooks.example.com/b ',
      addresses: `${A}\n${B}`,
      listRefs: [],
      phases: ['confirmed'],
      depth: '24',
    };
    expect(patchBody(loaded, typed, false)).toEqual({
      name: null,
      target_url: 'https://hooks.example.com/b',
      addresses: [A, B],
      list_refs: [],
      phases: ['confirmed'],
      confirm_depth: 24,
    });
  });

  it('writes the filter only where the form owns it, cleared when emptied', () => {
    const hashes = webhook({
      filters: { tx_hash: { in: [`0x${'a'.repeat(64)}`] } },
    });
    const from = formValuesOf(hashes);
    expect(txHashesOf(hashes.filters)).toEqual([`0x${'a'.repeat(64)}`]);
    const added = { ...from, txHashes: `${from.txHashes}\n0x${'b'.repeat(64)}` };
    expect(patchBody(from, added, true)).toEqual({
      filters: { tx_hash: { in: [`0x${'a'.repeat(64)}`, `0x${'b'.repeat(64)}`] } },
    });
    expect(patchBody(from, { ...from, txHashes: '' }, true)).toEqual({ filters: null });
    expect(patchBody(from, added, false)).toEqual({});
  });

  it('reapplies the user changes onto the current version, keeping the colleague changes', () => {
    // Bob changed the target, addresses and depth; Alice the name, and the depth too.
    const current = formValuesOf(
      webhook({
        target_url: 'https://hooks.example.com/bob',
        addresses: [B, C],
        confirm_depth: 30,
      }),
    );
    const typed = { ...loaded, name: 'Alice', depth: '40' };
    expect(changedFields(loaded, current)).toEqual(['targetUrl', 'addresses', 'depth']);
    const next = reapply(loaded, typed, current);
    expect(next).toEqual({ ...current, name: 'Alice', depth: '40' });
    // Saved against version 4, it sends Alice's two fields only.
    expect(patchBody(current, next, false)).toEqual({ name: 'Alice', confirm_depth: 40 });
  });

  it("names the version as the matcher's ETag and knows its refusal", () => {
    expect(ifMatch(7)).toBe('"7"');
    expect(isVersionMismatch({ status: 412, code: 'version_mismatch' })).toBe(true);
    expect(isVersionMismatch({ status: 409, code: 'version_mismatch' })).toBe(false);
    expect(isVersionMismatch(undefined)).toBe(false);
  });
});

describe('what a colleague changed, said on a 412 of Save, Pause, Resume or Delete', () => {
  const at = {
    name: 'Treasury',
    status: 'active',
    status_label: 'Active',
    target_url: 'https://a.example/hook',
    addresses: ['0x1111111111111111111111111111111111111111'],
    phases: ['unconfirmed', 'confirmed'],
    confirm_depth: 12,
  };
  it('names the fields they changed, in the form order, and a status that moved', () => {
    expect(colleagueChanges(at, { ...at, confirm_depth: 30, name: 'T' })).toEqual({
      fields: ['name', 'depth'],
      status: false,
    });
    expect(colleagueChanges(at, { ...at, status: 'paused', status_label: 'Paused' })).toEqual({
      fields: [],
      status: true,
    });
  });
  it('counts no change of blank space, address case or phase order', () => {
    expect(
      colleagueChanges(at, {
        ...at,
        name: ' Treasury ',
        addresses: ['0x1111111111111111111111111111111111111111'.toUpperCase().replace('0X', '0x')],
        phases: ['confirmed', 'unconfirmed'],
      }),
    ).toEqual({ fields: [], status: false });
  });
});
