import {
  CONFIRM_DEPTH_MAX,
  CONFIRM_DEPTH_MIN,
  DEFAULT_CONFIRM_DEPTH,
} from '@meridian/webhooks/bounds';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { splitEntries } from '../addresses';
import { api, ApiError, relay } from '../api';
import { every, WEBHOOK_VIEW_REFRESH_MS } from '../auto-refresh';
import { isCapError } from '../cap-errors';
import { CapNotice } from '../components/cap-notice';
import { Field } from '../components/field';
import { Card, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { placeErrors } from '../form-errors';
import type { Webhook } from '../types';
import { useAutoRefresh } from '../use-auto-refresh';
import { useSubmission } from '../use-submission';
import { checkWebhookForm } from '../webhook-checks';
import { WebhookConflict } from '../components/webhook-conflict';
import {
  changedFields,
  colleagueChanges,
  FIELD_LABELS,
  formValuesOf,
  isVersionMismatch,
  patchBody,
  reapply,
  txHashesOf,
  type EditableField,
  type WebhookInputs,
} from '../webhook-edit';
import { changeAtVersion } from '../webhook-version';
import { useNetworks } from './node-access';
import { useAddressLists, useWebhookLimits } from './webhooks';

const TRIGGERS = [
  { id: 'address_activity', label: 'Address activity (transactions and token transfers)' },
  { id: 'log_event', label: 'Log event' },
  { id: 'tx_confirmation', label: 'Transaction confirmation' },
];
const PHASES = ['unconfirmed', 'confirmed'] as const;

export { splitEntries };
export const splitAddresses = splitEntries;

/** The trigger whose filter must watch transaction hashes (the API's `tx_hash` leaf, ADR 0421). */
const TX_TRIGGER = 'tx_confirmation';

export { txHashesOf };

/**
 * The router state that carries a new webhook's signing secret to its page, the only time the
 * API hands it out. The page takes it and clears it from the history entry at once, so a reload
 * or a return to the entry does not show it again.
 */
export const newSecretState = (secret: string | undefined) => ({ newSecret: secret });

export function WebhookFormPage() {
  const { id } = useParams();
  const editing = id !== undefined;
  const navigate = useNavigate();
  const client = useQueryClient();
  const networks = useNetworks();
  const limits = useWebhookLimits();
  const lists = useAddressLists();
  const existing = useQuery({
    queryKey: ['webhook', id],
    queryFn: () => api<Webhook>('GET', relay('webhooks', `/webhooks/${id}`)),
    enabled: editing,
  });
  /**
   * The version the edit is made against: the webhook as first loaded (or as last reapplied
   * onto). A refresh of the query never overwrites what is typed; a newer version is shown
   * beside the form (ConflictNotice) and taken only by the user's choice.
   */
  const [loaded, setLoaded] = useState<Webhook | undefined>();
  const [form, setForm] = useState<WebhookInputs>({
    name: '',
    targetUrl: '',
    addresses: '',
    txHashes: '',
    listRefs: [],
    phases: ['unconfirmed', 'confirmed'],
    depth: String(DEFAULT_CONFIRM_DEPTH),
  });
  const set =
    <K extends EditableField>(field: K) =>
    (value: WebhookInputs[K]) =>
      setForm((values) => ({ ...values, [field]: value }));
  const { name, targetUrl, addresses, txHashes, listRefs, phases, depth } = form;
  const [network, setNetwork] = useState('eth-mainnet');
  const [trigger, setTrigger] = useState('address_activity');

  useEffect(() => {
    const w = existing.data;
    if (!w || loaded) return;
    setLoaded(w);
    setNetwork(w.network);
    setTrigger(w.trigger_type);
    setForm(formValuesOf(w));
  }, [existing.data, loaded]);

  // The webhook asked again while it is edited, as its page asks (every 15 s, and at once when
  // the tab is shown again): a colleague's change is said before Save, not after.
  useAutoRefresh({
    refresh: () => client.invalidateQueries({ queryKey: ['webhook', id] }),
    nextDelay: editing ? every(WEBHOOK_VIEW_REFRESH_MS) : null,
    policyKey: id ?? '',
  });

  // A new webhook starts on a network the deployment watches.
  const served = limits.data?.networks;
  useEffect(() => {
    if (editing || served === undefined || served.includes(network)) return;
    const first = served.find((key) => key !== 'sui-mainnet');
    if (first !== undefined) setNetwork(first);
  }, [editing, served, network]);

  // The hashes field writes the filter tree only where the form owns it (see txHashesOf).
  const watchesHashes =
    trigger === TX_TRIGGER && (!editing || txHashesOf(loaded?.filters) !== undefined);
  const hashes = splitEntries(txHashes);
  const fields: Record<string, unknown> = {
    name: name.trim() || undefined,
    target_url: targetUrl.trim(),
    addresses: splitAddresses(addresses),
    list_refs: listRefs,
    phases,
    confirm_depth: Number(depth),
  };
  // None given: left out, so the API says what is missing.
  if (watchesHashes && hashes.length) fields['filters'] = { tx_hash: { in: hashes } };
  // An edit sends only what its user changed from the version loaded, and only to that version
  // (If-Match): a colleague's change to the other fields stays, one to the same webhook since
  // is refused (412 version_mismatch) and said (ConflictNotice).
  const loadedValues = loaded ? formValuesOf(loaded) : undefined;
  const current = existing.data;
  const save = useSubmission({
    values: editing
      ? loadedValues
        ? patchBody(loadedValues, form, watchesHashes)
        : {}
      : { ...fields, network, trigger_type: trigger },
    // Every problem the form can see, at once and in words, before anything is sent.
    check: () =>
      checkWebhookForm({
        target_url: targetUrl,
        addresses,
        tx_hashes: watchesHashes ? txHashes : undefined,
        list_refs: listRefs,
        phases,
        confirm_depth: depth,
        trigger_type: trigger,
      }),
    send: async (body, key) => {
      if (!editing)
        return api<Webhook>('POST', relay('webhooks', '/webhooks'), body, {
          'idempotency-key': key,
        });
      // Nothing changed: nothing to send (and no version to contend for).
      if (Object.keys(body).length === 0) return loaded!;
      // Refused (412): the version now current is asked for, to show beside what was typed.
      return changeAtVersion(client, 'save', id!, loaded!.version, body);
    },
    onSuccess: (webhook) => {
      void client.invalidateQueries({ queryKey: ['webhooks'] });
      void client.invalidateQueries({ queryKey: ['webhook-limits'] });
      void client.invalidateQueries({ queryKey: ['webhook', webhook.id] });
      if (editing) navigate(`/webhooks/${webhook.id}`);
      // To the webhook's own page, which shows the secret once (newSecretState): a reload
      // there shows the webhook, not a blank form with the secret gone.
      else navigate(`/webhooks/${webhook.id}`, { state: newSecretState(webhook.secret) });
    },
  });
  const error = save.error instanceof ApiError ? save.error : undefined;
  const refused = isVersionMismatch(error);
  const newer =
    editing && loaded !== undefined && current !== undefined && current.version !== loaded.version
      ? current
      : undefined;
  const takeCurrent = (mine: boolean) => {
    if (!newer || !loadedValues) return;
    const currentValues = formValuesOf(newer);
    setForm(mine ? reapply(loadedValues, form, currentValues) : currentValues);
    setLoaded(newer);
    save.reset();
  };

  if (editing && existing.isPending) return <Loading />;
  if (editing && existing.isError) return <ErrorState error={existing.error} />;
  // Only the networks this deployment watches (a webhook on another one is refused, 400
  // network_not_indexed), and the edited webhook's own.
  const evm =
    networks.data?.items.filter(
      (n) =>
        n.key !== 'sui-mainnet' &&
        (served === undefined || served.includes(n.key) || n.key === network),
    ) ?? [];
  // The API names the filter (`filters`: tx_hash_required, filter_required) or a hash in it
  // (`filters.tx_hash.in[1]`: invalid_tx_hash); with the hashes field shown, that is its error,
  // else the addresses field's (the filter a webhook made through the API may hold addresses).
  const errors = placeErrors(save.error, {
    name: ['name'],
    network: ['network', 'chain'],
    trigger: ['trigger_type'],
    target: ['target_url'],
    hashes: watchesHashes ? ['filters'] : [],
    addresses: watchesHashes ? ['addresses'] : ['addresses', 'filters'],
    lists: ['list_refs'],
    phases: ['phases'],
    depth: ['confirm_depth'],
  });
  return (
    <>
      <PageHeader title={editing ? 'Edit webhook' : 'Create webhook'} />
      <Card>
        <form onSubmit={save.submit} className="form" noValidate>
          {(refused || newer) && (
            <WebhookConflict
              actedOn={loaded!}
              current={newer}
              typed={form}
              kept="Nothing you typed has been saved or lost."
              listName={(ref) => lists.data?.items.find((l) => l.id === ref)?.name ?? ref}
            >
              {newer && (
                <ConflictChoices
                  mine={changedFields(formValuesOf(loaded!), form)}
                  theirs={colleagueChanges(loaded!, newer).fields}
                  onReapply={() => takeCurrent(true)}
                  onDiscard={() => takeCurrent(false)}
                />
              )}
            </WebhookConflict>
          )}
          {errors.notice &&
            !refused &&
            (error && isCapError(error.code) ? (
              <CapNotice error={error} />
            ) : (
              <Notice tone="bad">{errors.notice}</Notice>
            ))}
          <Field label="Name" error={errors.fields.name}>
            <input value={name} maxLength={200} onChange={(e) => set('name')(e.target.value)} />
          </Field>
          <div className="grid grid-2">
            <Field
              label="Network"
              hint={editing ? 'Cannot change after creation.' : undefined}
              error={errors.fields.network}
            >
              <select
                value={network}
                disabled={editing}
                onChange={(e) => setNetwork(e.target.value)}
              >
                {evm.map((n) => (
                  <option key={n.key} value={n.key}>
                    {n.display_name}
                  </option>
                ))}
              </select>
            </Field>
            <Field
              label="Trigger"
              hint={editing ? 'Cannot change after creation.' : undefined}
              error={errors.fields.trigger}
            >
              <select
                value={trigger}
                disabled={editing}
                onChange={(e) => setTrigger(e.target.value)}
              >
                {TRIGGERS.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.label}
                  </option>
                ))}
              </select>
            </Field>
          </div>
          <Field
            label="Target URL"
            hint="https only; we POST each event here."
            error={errors.fields.target}
          >
            <input
              type="url"
              inputMode="url"
              value={targetUrl}
              onChange={(e) => set('targetUrl')(e.target.value)}
              placeholder="https://example.com/hooks"
            />
          </Field>
          {watchesHashes && (
            <Field
              label="Transaction hashes"
              hint="The transactions to watch: one 0x hash (64 hex digits) per line, or paste many at once; any letter case; up to 1,000."
              error={errors.fields.hashes}
            >
              <textarea
                rows={4}
                value={txHashes}
                onChange={(e) => set('txHashes')(e.target.value)}
                spellCheck={false}
              />
            </Field>
          )}
          {trigger === TX_TRIGGER && !watchesHashes && (
            <p className="muted">
              This webhook&apos;s filter was set through the API; change its transaction hashes
              there.
            </p>
          )}
          <Field
            label="Addresses"
            hint={
              trigger === TX_TRIGGER
                ? 'Optional: only watched transactions that touch these addresses. One per line; all lower case, or mixed case with its EIP-55 checksum.'
                : 'One per line (or separated by commas); all lower case, or mixed case with its EIP-55 checksum.'
            }
            error={errors.fields.addresses}
          >
            <textarea
              rows={4}
              value={addresses}
              onChange={(e) => set('addresses')(e.target.value)}
              spellCheck={false}
            />
          </Field>
          <fieldset className="fieldset">
            <legend>Address lists</legend>
            {lists.data?.items.length ? (
              lists.data.items.map((l) => (
                <label key={l.id} className="check">
                  <input
                    type="checkbox"
                    checked={listRefs.includes(l.id)}
                    onChange={(e) =>
                      set('listRefs')(
                        e.target.checked ? [...listRefs, l.id] : listRefs.filter((r) => r !== l.id),
                      )
                    }
                  />
                  {l.name}
                </label>
              ))
            ) : (
              <p className="muted">
                No lists yet. <Link to="/address-lists">Create an address list</Link> to watch many
                addresses.
              </p>
            )}
            {errors.fields.lists && <p className="field-error">{errors.fields.lists}</p>}
          </fieldset>
          <div className="grid grid-2">
            <fieldset className="fieldset">
              <legend>Phases</legend>
              {PHASES.map((p) => (
                <label key={p} className="check">
                  <input
                    type="checkbox"
                    checked={phases.includes(p)}
                    onChange={(e) =>
                      set('phases')(
                        e.target.checked ? [...phases, p] : phases.filter((x) => x !== p),
                      )
                    }
                  />
                  {p === 'unconfirmed' ? 'Unconfirmed (at once)' : 'Confirmed (after the depth)'}
                </label>
              ))}
              {errors.fields.phases && <p className="field-error">{errors.fields.phases}</p>}
            </fieldset>
            <Field
              label="Confirmation depth"
              hint={`Blocks, ${CONFIRM_DEPTH_MIN} to ${CONFIRM_DEPTH_MAX}.`}
              error={errors.fields.depth}
            >
              <input
                type="number"
                min={CONFIRM_DEPTH_MIN}
                max={CONFIRM_DEPTH_MAX}
                value={depth}
                onChange={(e) => set('depth')(e.target.value)}
              />
            </Field>
          </div>
          <div className="actions">
            <button type="submit" className="button" disabled={save.pending}>
              {editing ? 'Save changes' : 'Create webhook'}
            </button>
            <Link
              className="button button-secondary"
              to={editing ? `/webhooks/${id}` : '/webhooks'}
            >
              Cancel
            </Link>
          </div>
        </form>
      </Card>
    </>
  );
}

/**
 * The edit's ways on from a colleague's change: the typed changes reapplied onto the current
 * version, or dropped. What the user typed stays in the form until they choose.
 */
function ConflictChoices(props: {
  mine: EditableField[];
  theirs: EditableField[];
  onReapply: () => void;
  onDiscard: () => void;
}) {
  const { mine, theirs } = props;
  const both = theirs.filter((field) => mine.includes(field));
  return (
    <>
      <p>
        {mine.length > 0
          ? `Your changes: ${mine.map((field) => FIELD_LABELS[field]).join(', ')}. `
          : 'You have changed nothing yet. '}
        {both.length > 0
          ? 'Reapplying keeps your value where you both changed a field.'
          : 'Reapplying keeps their changes and yours.'}
      </p>
      <div className="actions">
        <button type="button" className="button" onClick={props.onReapply}>
          {mine.length > 0
            ? 'Reapply my changes to the current version'
            : 'Load the current version'}
        </button>
        {mine.length > 0 && (
          <button type="button" className="button button-secondary" onClick={props.onDiscard}>
            Discard my changes
          </button>
        )}
      </div>
    </>
  );
}
