import type { ReactNode } from 'react';
import { splitEntries } from '../addresses';
import type { Webhook } from '../types';
import {
  changedFields,
  colleagueChanges,
  FIELD_LABELS,
  formValuesOf,
  type EditableField,
  type WebhookInputs,
} from '../webhook-edit';
import { Notice } from './ui';

/** A field's value as the notice says it. */
function valueInWords(
  field: EditableField,
  values: WebhookInputs,
  listName: (ref: string) => string,
): string {
  switch (field) {
    case 'name':
      return values.name.trim() || '(no name)';
    case 'targetUrl':
      return values.targetUrl;
    case 'addresses':
    case 'txHashes': {
      const all = splitEntries(values[field]);
      return all.length === 0 ? '(none)' : all.join(', ');
    }
    case 'listRefs':
      return values.listRefs.length ? values.listRefs.map(listName).join(', ') : '(none)';
    case 'phases':
      return values.phases.join(', ') || '(none)';
    case 'depth':
      return `${values.depth} blocks`;
  }
}

/**
 * Someone else changed the webhook after the page showed it (the edit form's refresh found a
 * newer version, or Save, Pause, Resume or Delete was refused with 412 `version_mismatch`,
 * webhook-version.tsx): what they changed, with its current value, then the caller's ways on
 * (`children`). One notice for every change made at a version, so each says it alike.
 * `typed`: the edit form's inputs, whose changes are marked where the colleague's meet them.
 * `kept`: what the refusal left as it was ("Nothing was deleted.").
 */
export function WebhookConflict(props: {
  actedOn: Webhook;
  current: Webhook | undefined;
  typed?: WebhookInputs;
  kept: string;
  listName: (ref: string) => string;
  children?: ReactNode;
}) {
  const { actedOn, current } = props;
  if (!current)
    return (
      <Notice tone="bad">
        <span data-testid="webhook-conflict-loading">
          A colleague changed this webhook after you opened it. {props.kept} Loading its current
          settings…
        </span>
      </Notice>
    );
  const mine = props.typed ? changedFields(formValuesOf(actedOn), props.typed) : [];
  const theirs = colleagueChanges(actedOn, current);
  const currentValues = formValuesOf(current);
  return (
    <div className="notice notice-bad conflict" role="alert">
      <p>
        <strong>A colleague changed this webhook after you opened it</strong> (version{' '}
        {actedOn.version} → {current.version}). {props.kept}
      </p>
      {theirs.fields.length > 0 || theirs.status ? (
        <>
          <p>What they changed, as it is now:</p>
          <ul>
            {theirs.status && <li key="status">Status: {current.status_label}</li>}
            {theirs.fields.map((field) => (
              <li key={field}>
                {FIELD_LABELS[field]}: {valueInWords(field, currentValues, props.listName)}
                {mine.includes(field) ? ' (you changed it too)' : ''}
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p>None of its settings or its status changed (its secret may have).</p>
      )}
      {props.children}
    </div>
  );
}
