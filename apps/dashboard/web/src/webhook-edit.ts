/**
 * A webhook's edit form against the version it was loaded from (QA QQ, Medium 1): the form
 * sends only the fields its user changed, with `If-Match: "<version>"` of that version, so a
 * colleague's change to other fields (through the API or another tab) is never reverted, and a
 * change to the same webhook since then is refused (412 `version_mismatch`) instead of
 * overwritten. On that refusal, or when the page's refresh finds a newer version, the form
 * shows what the colleague changed and reapplies its user's changes onto the current version.
 */
import { splitEntries } from './addresses';

/** The webhook object's fields this form edits (`Webhook` of types.tsx has them all). */
export interface EditedWebhook {
  name: string | null;
  status?: string;
  status_label?: string;
  target_url: string;
  addresses?: string[];
  filters?: unknown;
  list_refs?: string[];
  phases: string[];
  confirm_depth: number;
}

/** The form's inputs as typed (text areas as text, the depth as text). */
export interface WebhookInputs {
  name: string;
  targetUrl: string;
  addresses: string;
  txHashes: string;
  listRefs: string[];
  phases: string[];
  depth: string;
}

export type EditableField = keyof WebhookInputs;

/**
 * The hashes of a stored filter this form can edit: none (no tree) or one `tx_hash` leaf, which
 * is what the form writes. Undefined for any other tree (made through the API), which the form
 * leaves as it is.
 */
export function txHashesOf(filters: unknown): string[] | undefined {
  if (filters === null || filters === undefined) return [];
  if (typeof filters !== 'object' || Object.keys(filters).length !== 1) return undefined;
  const leaf = (filters as { tx_hash?: { in?: unknown } }).tx_hash;
  return Array.isArray(leaf?.in) ? leaf.in.map(String) : undefined;
}

/** The form's inputs for a webhook as the API answered it. */
export function formValuesOf(webhook: EditedWebhook): WebhookInputs {
  return {
    name: webhook.name ?? '',
    targetUrl: webhook.target_url,
    addresses: (webhook.addresses ?? []).join('\n'),
    txHashes: (txHashesOf(webhook.filters) ?? []).join('\n'),
    listRefs: webhook.list_refs ?? [],
    phases: webhook.phases,
    depth: String(webhook.confirm_depth),
  };
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((item) => b.includes(item));
const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((item, at) => item === b[at]);

/** Whether one input differs in meaning (not in blank space or order where order is moot). */
export function fieldChanged(
  field: EditableField,
  from: WebhookInputs,
  to: WebhookInputs,
): boolean {
  switch (field) {
    case 'name':
    case 'targetUrl':
    case 'depth':
      return from[field].trim() !== to[field].trim();
    case 'addresses':
    case 'txHashes':
      return !sameList(
        splitEntries(from[field]).map((entry) => entry.toLowerCase()),
        splitEntries(to[field]).map((entry) => entry.toLowerCase()),
      );
    case 'listRefs':
    case 'phases':
      return !sameSet(from[field], to[field]);
  }
}

const FIELDS: readonly EditableField[] = [
  'name',
  'targetUrl',
  'addresses',
  'txHashes',
  'listRefs',
  'phases',
  'depth',
];

/** The inputs whose meaning differs between two sets of values, in the form's order. */
export function changedFields(from: WebhookInputs, to: WebhookInputs): EditableField[] {
  return FIELDS.filter((field) => fieldChanged(field, from, to));
}

/**
 * The PATCH body: only what the user changed from the loaded version. `watchesHashes`: the form
 * owns the filter tree (a `tx_hash` leaf or none), so a change of the hashes writes `filters`.
 */
export function patchBody(
  loaded: WebhookInputs,
  typed: WebhookInputs,
  watchesHashes: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of changedFields(loaded, typed)) {
    if (field === 'name') body['name'] = typed.name.trim() || null;
    if (field === 'targetUrl') body['target_url'] = typed.targetUrl.trim();
    if (field === 'addresses') body['addresses'] = splitEntries(typed.addresses);
    if (field === 'listRefs') body['list_refs'] = typed.listRefs;
    if (field === 'phases') body['phases'] = typed.phases;
    if (field === 'depth') body['confirm_depth'] = Number(typed.depth);
    if (field === 'txHashes' && watchesHashes) {
      const hashes = splitEntries(typed.txHashes);
      // None given: cleared, so the API says what is missing.
      body['filters'] = hashes.length ? { tx_hash: { in: hashes } } : null;
    }
  }
  return body;
}

/** The `If-Match` value of a version: the matcher's ETag, a quoted decimal. */
export const ifMatch = (version: number) => `"${version}"`;

/**
 * The user's changes reapplied onto the current version: each field the user changed keeps
 * what they typed, every other field takes the current value (the colleague's, if changed).
 */
export function reapply(
  loaded: WebhookInputs,
  typed: WebhookInputs,
  current: WebhookInputs,
): WebhookInputs {
  const mine = new Set(changedFields(loaded, typed));
  const next = { ...current };
  for (const field of mine) (next as Record<EditableField, unknown>)[field] = typed[field];
  return next;
}

export const FIELD_LABELS: Record<EditableField, string> = {
  name: 'Name',
  targetUrl: 'Target URL',
  addresses: 'Addresses',
  txHashes: 'Transaction hashes',
  listRefs: 'Address lists',
  phases: 'Phases',
  depth: 'Confirmation depth',
};

/** Whether an API error is the matcher's refusal of a change to a version no longer current. */
export const isVersionMismatch = (error: { status: number; code: string } | null | undefined) =>
  error?.status === 412 && error.code === 'version_mismatch';

/**
 * What a colleague changed between the version a user acted on and the current one: the form's
 * fields (in the form's order) and whether the status moved (a pause, resume or the service's
 * own pause). Save, Pause, Resume and Delete all say this on a 412 (components/webhook-conflict).
 */
export function colleagueChanges(
  actedOn: EditedWebhook,
  current: EditedWebhook,
): { fields: EditableField[]; status: boolean } {
  return {
    fields: changedFields(formValuesOf(actedOn), formValuesOf(current)),
    status: actedOn.status !== current.status,
  };
}
