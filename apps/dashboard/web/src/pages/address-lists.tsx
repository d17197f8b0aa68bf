import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ChangeEvent, type FormEvent } from 'react';
import { api, ApiError, relay } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { Field } from '../components/field';
import { Card, Empty, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { formatDateTime, formatNumber } from '../format';
import type { AddressList, Page } from '../types';
import { splitAddresses } from './webhook-form';
import { useAddressLists } from './webhooks';

/** Addresses out of a CSV file: every 0x-and-40-hex token in any column, in order. */
export function addressesOfCsv(text: string): string[] {
  return text.match(/0x[0-9a-fA-F]{40}/g) ?? [];
}

function AddressInput(props: {
  value: string;
  onChange: (v: string) => void;
  error?: string;
  label: string;
}) {
  const onFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    if (!file) return;
    const found = addressesOfCsv(await file.text());
    props.onChange([props.value.trim(), ...found].filter(Boolean).join('\n'));
    event.target.value = '';
  };
  return (
    <>
      <Field
        label={props.label}
        hint="Paste addresses, one per line or separated by commas."
        error={props.error}
      >
        <textarea
          rows={6}
          spellCheck={false}
          value={props.value}
          onChange={(e) => props.onChange(e.target.value)}
        />
      </Field>
      <Field
        label="Or upload a CSV file"
        hint="Every address found in the file is added to the box above."
      >
        <input type="file" accept=".csv,text/csv,text/plain" onChange={(e) => void onFile(e)} />
      </Field>
      <p className="muted">{formatNumber(splitAddresses(props.value).length)} addresses entered.</p>
    </>
  );
}

function ListEntries(props: { list: AddressList; onDeleted: () => void }) {
  const client = useQueryClient();
  const entries = useQuery({
    queryKey: ['list-entries', props.list.id],
    queryFn: () =>
      api<Page<string | { address: string }>>(
        'GET',
        relay('webhooks', `/address-lists/${props.list.id}/entries?limit=200`),
      ),
  });
  const [text, setText] = useState('');
  const [confirmDelete, setConfirmDelete] = useState(false);
  const refresh = () => {
    void client.invalidateQueries({ queryKey: ['list-entries', props.list.id] });
    void client.invalidateQueries({ queryKey: ['address-lists'] });
    void client.invalidateQueries({ queryKey: ['webhook-limits'] });
  };
  const change = useMutation({
    mutationFn: (kind: 'add' | 'remove' | 'replace') => {
      const body = { addresses: splitAddresses(text) };
      const base = relay('webhooks', `/address-lists/${props.list.id}/entries`);
      if (kind === 'add') return api('POST', base, body);
      if (kind === 'remove') return api('POST', `${base}/remove`, body);
      return api('PUT', base, body);
    },
    onSuccess: () => {
      setText('');
      refresh();
    },
  });
  const remove = useMutation({
    mutationFn: () => api('DELETE', relay('webhooks', `/address-lists/${props.list.id}`)),
    onSuccess: () => {
      setConfirmDelete(false);
      refresh();
      props.onDeleted();
    },
  });
  const error = change.error instanceof ApiError ? change.error : undefined;
  return (
    <Card
      title={`List: ${props.list.name}`}
      actions={
        <button
          type="button"
          className="button button-danger button-small"
          onClick={() => setConfirmDelete(true)}
        >
          Delete list
        </button>
      }
    >
      {remove.error && (
        <Notice tone="bad">
          {remove.error instanceof ApiError && remove.error.code === 'list_in_use'
            ? 'A webhook uses this list; remove it from the webhook first.'
            : remove.error.message}
        </Notice>
      )}
      <AddressInput
        label="Addresses to change"
        value={text}
        onChange={setText}
        error={error?.fields['addresses'] ?? (error ? error.message : undefined)}
      />
      <div className="actions">
        <button
          type="button"
          className="button"
          disabled={!text.trim() || change.isPending}
          onClick={() => change.mutate('add')}
        >
          Add
        </button>
        <button
          type="button"
          className="button button-secondary"
          disabled={!text.trim() || change.isPending}
          onClick={() => change.mutate('remove')}
        >
          Remove
        </button>
        <button
          type="button"
          className="button button-secondary"
          disabled={change.isPending}
          onClick={() => change.mutate('replace')}
        >
          Replace all with these
        </button>
      </div>
      <h3>Entries</h3>
      {entries.isPending ? (
        <Loading />
      ) : entries.isError ? (
        <ErrorState error={entries.error} />
      ) : entries.data.items.length === 0 ? (
        <Empty title="This list is empty." />
      ) : (
        <ul className="address-list" data-testid="list-entries">
          {entries.data.items.map((e) => {
            const address = typeof e === 'string' ? e : e.address;
            return (
              <li key={address}>
                <code>{address}</code>
              </li>
            );
          })}
        </ul>
      )}
      {entries.data?.next_cursor && <p className="muted">Showing the first 200.</p>}
      <ConfirmDialog
        open={confirmDelete}
        title="Delete this address list?"
        confirmLabel="Delete list"
        danger
        busy={remove.isPending}
        onCancel={() => setConfirmDelete(false)}
        onConfirm={() => remove.mutate()}
      >
        <p>The list and its addresses are deleted. A list a webhook uses cannot be deleted.</p>
      </ConfirmDialog>
    </Card>
  );
}

export function AddressListsPage() {
  const client = useQueryClient();
  const lists = useAddressLists();
  const [selected, setSelected] = useState<string | undefined>();
  const [name, setName] = useState('');
  const [text, setText] = useState('');
  const create = useMutation({
    mutationFn: async () => {
      const list = await api<AddressList>('POST', relay('webhooks', '/address-lists'), {
        name: name.trim(),
      });
      const addresses = splitAddresses(text);
      if (addresses.length)
        await api('POST', relay('webhooks', `/address-lists/${list.id}/entries`), { addresses });
      return list;
    },
    onSuccess: (list) => {
      setName('');
      setText('');
      setSelected(list.id);
      void client.invalidateQueries({ queryKey: ['address-lists'] });
      void client.invalidateQueries({ queryKey: ['webhook-limits'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const error = create.error instanceof ApiError ? create.error : undefined;
  const current = lists.data?.items.find((l) => l.id === selected);
  return (
    <>
      <PageHeader
        title="Address lists"
        description="Named lists of addresses that webhooks watch together."
      />
      <div className="grid grid-2">
        <Card title="Create a list">
          <form onSubmit={submit} noValidate>
            <Field label="List name" error={error?.fields['name']}>
              <input value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />
            </Field>
            <AddressInput
              label="Addresses"
              value={text}
              onChange={setText}
              error={error?.fields['addresses']}
            />
            {error && !error.fields['name'] && !error.fields['addresses'] && (
              <Notice tone="bad">{error.message}</Notice>
            )}
            <button type="submit" className="button" disabled={!name.trim() || create.isPending}>
              Create list
            </button>
          </form>
        </Card>
        <Card title="Your lists">
          {lists.isPending ? (
            <Loading />
          ) : lists.isError ? (
            <ErrorState error={lists.error} retry={() => void lists.refetch()} />
          ) : lists.data.items.length === 0 ? (
            <Empty title="No lists yet." />
          ) : (
            <ul className="plain-list" data-testid="address-lists">
              {lists.data.items.map((l) => (
                <li key={l.id}>
                  <button
                    type="button"
                    className="link-button"
                    aria-pressed={selected === l.id}
                    onClick={() => setSelected(l.id)}
                  >
                    {l.name}
                  </button>{' '}
                  <span className="muted">
                    {formatNumber(l.size ?? l.address_count ?? 0)} addresses ·{' '}
                    {formatDateTime(l.created_at)}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </Card>
      </div>
      {current && (
        <ListEntries key={current.id} list={current} onDeleted={() => setSelected(undefined)} />
      )}
    </>
  );
}
