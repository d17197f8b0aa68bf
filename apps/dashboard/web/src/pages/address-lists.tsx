import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useDeferredValue, useEffect, useMemo, useState, type ChangeEvent } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import {
  addressChecker,
  checkAddresses,
  checksumSuggestion,
  entriesChangeOutcome,
  mergeChecked,
  type CheckedAddresses,
} from '../addresses';
import { api, ApiError, relay } from '../api';
import { isCapError } from '../cap-errors';
import { CapNotice } from '../components/cap-notice';
import { ConfirmDialog } from '../components/confirm-dialog';
import { Field } from '../components/field';
import { Card, Empty, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { formatDateTime, formatNumber } from '../format';
import { placeErrors } from '../form-errors';
import { entriesQuery, readListSearch } from '../list-search';
import type { AddressList, Page } from '../types';
import { useSubmission } from '../use-submission';
import { splitAddresses } from './webhook-form';
import { useAddressLists, useWebhooks } from './webhooks';

const plural = (n: number, one: string, many: string) =>
  `${formatNumber(n)} ${n === 1 ? one : many}`;

/** Invalid entries shown by name, this many at most. */
const SHOWN_INVALID = 5;

/** Addresses out of a CSV file: every 0x-and-40-hex token in any column, in order. */
export function addressesOfCsv(text: string): string[] {
  return text.match(/0x[0-9a-fA-F]{40}/g) ?? [];
}

/**
 * What a textarea holds at most; more (a paste, a CSV file) is kept out of it, beside the box.
 * Chromium lays out the whole text of a textarea on each key: with 100,000 addresses in it a
 * keystroke took 0.3–0.6 s with no script at all, and QA measured 0.65 s on this page.
 */
export const BOX_CHARS = 50_000;

/**
 * A box of addresses: what is typed in the textarea, and what is held beside it (a paste or
 * file over `BOX_CHARS`), checked once when it arrives. The count and flags read both, as the
 * API will (`mergeChecked`); the typed part is checked once per change and behind the keystroke
 * (useDeferredValue: the box shows the key at once, the count follows), each entry's checksum
 * kept from the last check (`addressChecker`), never on every render.
 */
function useAddressBox() {
  const [typed, setTyped] = useState('');
  const [held, setHeld] = useState('');
  const deferred = useDeferredValue(typed);
  const [checkTyped] = useState(addressChecker);
  const heldEntries = useMemo(() => splitAddresses(held), [held]);
  const heldChecked = useMemo(() => checkAddresses(held), [held]);
  const heldSeen = useMemo(() => new Set(heldChecked.valid), [heldChecked]);
  const checked = useMemo(
    () => mergeChecked(heldChecked, checkTyped(deferred), heldSeen),
    [heldChecked, heldSeen, checkTyped, deferred],
  );
  const entries = useMemo(
    () =>
      heldEntries.length > 0 ? [...heldEntries, ...splitAddresses(typed)] : splitAddresses(typed),
    [heldEntries, typed],
  );
  return {
    typed,
    /** The textarea's new text: kept there up to `BOX_CHARS`, else held beside it, all of it. */
    change: (value: string) => {
      if (value.length <= BOX_CHARS) return setTyped(value);
      setHeld((before) => (before ? `${before}\n${value}` : value));
      setTyped('');
    },
    held: heldEntries.length,
    dropHeld: () => setHeld(''),
    clear: () => {
      setHeld('');
      setTyped('');
    },
    /** The entries as sent, held ones first. */
    entries,
    /** Checked now, not behind the keystroke: what a press of Add or Remove asks. */
    checkNow: () => mergeChecked(heldChecked, checkTyped(typed), heldSeen),
    checked,
    counting: deferred !== typed,
  };
}

type AddressBox = ReturnType<typeof useAddressBox>;

function AddressInput(props: { box: AddressBox; error?: string; label: string }) {
  const { box } = props;
  const onFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    if (!file) return;
    const found = addressesOfCsv(await file.text());
    box.change([box.typed.trim(), ...found].filter(Boolean).join('\n'));
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
          value={box.typed}
          onChange={(e) => box.change(e.target.value)}
        />
      </Field>
      {box.held > 0 && (
        <p className="muted" data-testid="held-addresses">
          {plural(box.held, 'entry', 'entries')} pasted or uploaded {box.held === 1 ? 'is' : 'are'}{' '}
          held beside the box, so that typing in it stays quick: counted below and sent with it.{' '}
          <button type="button" className="link-button" onClick={box.dropHeld}>
            Remove them
          </button>
        </p>
      )}
      <Field
        label="Or upload a CSV file"
        hint="Every address found in the file is added to the box above."
      >
        <input type="file" accept=".csv,text/csv,text/plain" onChange={(e) => void onFile(e)} />
      </Field>
      <AddressCount checked={box.checked} counting={box.counting} />
    </>
  );
}

/** Only valid addresses count (distinct, as the API stores them); the rest are named. */
function AddressCount(props: { checked: CheckedAddresses; counting: boolean }) {
  const { valid, invalid, wrongChecksum, duplicates } = props.checked;
  // A wrong checksum is a typo of an address, named with its checksummed form (the webhook
  // form's and the API's wording); only a malformed entry is "not an address".
  const typos = new Set(wrongChecksum.map((w) => w.entry));
  const malformed = invalid.filter((e) => !typos.has(e));
  return (
    <>
      <p className="muted" data-testid="address-count" aria-busy={props.counting}>
        {plural(valid.length, 'valid address', 'valid addresses')} entered
        {duplicates > 0 && ` (${plural(duplicates, 'repeat', 'repeats')} counted once)`}.
      </p>
      {invalid.length > 0 && (
        <Notice tone="warn">
          {malformed.length > 0 && (
            <span data-testid="invalid-addresses">
              {malformed.length === 1
                ? '1 entry is not an address'
                : `${formatNumber(malformed.length)} entries are not addresses`}{' '}
              (0x and 40 hex digits, in mixed case only with its EIP-55 checksum):{' '}
              {malformed.slice(0, SHOWN_INVALID).map((entry, i) => (
                <span key={`${i}-${entry}`}>
                  {i > 0 && ', '}
                  <code>{entry}</code>
                </span>
              ))}
              {malformed.length > SHOWN_INVALID &&
                ` and ${formatNumber(malformed.length - SHOWN_INVALID)} more`}
              .{' '}
            </span>
          )}
          {wrongChecksum.length > 0 && (
            <span data-testid="checksum-mistakes">
              {wrongChecksum.length === 1
                ? '1 entry has'
                : `${formatNumber(wrongChecksum.length)} entries have`}{' '}
              mixed case but a wrong EIP-55 checksum (a typo?):{' '}
              {wrongChecksum.slice(0, SHOWN_INVALID).map(({ entry, expected }, i) => (
                <span key={`${i}-${entry}`}>
                  {i > 0 && '; '}
                  <code>{entry}</code>: {checksumSuggestion(expected)}
                </span>
              ))}
              {wrongChecksum.length > SHOWN_INVALID &&
                `; and ${formatNumber(wrongChecksum.length - SHOWN_INVALID)} more`}
              .{' '}
            </span>
          )}
          The API refuses the whole request while one is there.
        </Notice>
      )}
    </>
  );
}

/** The webhooks a refused delete names (409 list_in_use answers their ids), by name and linked. */
function ListInUse(props: { webhookIds: string[] }) {
  const webhooks = useWebhooks();
  const nameOf = (id: string) => webhooks.data?.items.find((w) => w.id === id)?.name || id;
  return (
    <Notice tone="bad">
      <span data-testid="list-in-use">
        This list cannot be deleted while{' '}
        {props.webhookIds.length === 1 ? 'a webhook uses' : 'these webhooks use'} it:{' '}
        {props.webhookIds.map((id, i) => (
          <span key={id}>
            {i > 0 && ', '}
            <Link to={`/webhooks/${id}`}>{nameOf(id)}</Link>
          </span>
        ))}
        . Remove the list from {props.webhookIds.length === 1 ? 'that webhook' : 'them'} first.
      </span>
    </Notice>
  );
}

/** Entries read a page at a time: the route's largest page. */
const ENTRIES_PAGE = 200;

const addressOf = (e: string | { address: string }) => (typeof e === 'string' ? e : e.address);

/** `value`, once it has stayed the same for `ms`: a search asks once typing pauses. */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/**
 * A list's entries in address order, 200 at a time with Show more (the route's cursor), and a
 * search by the start of an address or a whole one (the route's `?prefix=`, `list-search.ts`):
 * QA could not tell from the page whether an address is in a list of 100,000 when only the
 * first 200 were shown.
 */
function ListEntriesBrowser(props: { listId: string; size: number }) {
  const [search, setSearch] = useState('');
  const asked = readListSearch(useSettled(search, 300));
  const seek = asked?.ok ? asked : undefined;
  const entries = useInfiniteQuery({
    queryKey: ['list-entries', props.listId, seek?.prefix ?? ''],
    enabled: asked?.ok !== false,
    queryFn: ({ pageParam }) =>
      api<Page<string | { address: string }>>(
        'GET',
        relay(
          'webhooks',
          `/address-lists/${props.listId}/entries?${entriesQuery(ENTRIES_PAGE, pageParam, seek)}`,
        ),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const shown = entries.data?.pages.flatMap((p) => p.items.map(addressOf)) ?? [];
  const more = entries.hasNextPage && (
    <button
      type="button"
      className="button button-secondary button-small"
      disabled={entries.isFetchingNextPage}
      onClick={() => void entries.fetchNextPage()}
    >
      {entries.isFetchingNextPage ? 'Loading…' : 'Show more'}
    </button>
  );
  let summary: string;
  if (!seek)
    summary = entries.hasNextPage
      ? `Showing ${formatNumber(shown.length)} of ${plural(props.size, 'address', 'addresses')}, in address order.`
      : `All ${plural(shown.length, 'address', 'addresses')} shown.`;
  else if (seek.whole)
    summary =
      shown.length > 0 ? `${seek.prefix} is in this list.` : `${seek.prefix} is not in this list.`;
  else if (shown.length === 0) summary = `No address of this list starts with ${seek.prefix}.`;
  else
    summary = `${plural(shown.length, 'address starts', 'addresses start')} with ${seek.prefix}${entries.hasNextPage ? ' so far; more may follow' : ''}.`;
  return (
    <>
      <h3>Entries</h3>
      <Field
        label="Find an address"
        hint="The start of an address, or a whole one to see whether the list holds it."
        error={asked?.ok === false ? asked.message : undefined}
      >
        <input
          type="search"
          spellCheck={false}
          value={search}
          onChange={(e) => setSearch(e.target.value)}
        />
      </Field>
      {asked?.ok === false ? null : entries.isPending ? (
        <Loading />
      ) : entries.isError ? (
        <ErrorState error={entries.error} retry={() => void entries.refetch()} />
      ) : !seek && shown.length === 0 ? (
        <Empty title="This list is empty." />
      ) : (
        <>
          <p className="muted" data-testid="entries-shown" aria-live="polite">
            {summary}
          </p>
          {shown.length > 0 && (
            <ul className="address-list" data-testid="list-entries">
              {shown.map((address) => (
                <li key={address}>
                  <code>{address}</code>
                </li>
              ))}
            </ul>
          )}
          {more && <div className="actions">{more}</div>}
        </>
      )}
    </>
  );
}

function ListEntries(props: { list: AddressList; onDeleted: () => void }) {
  const client = useQueryClient();
  const box = useAddressBox();
  const empty = box.entries.length === 0;
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [confirmReplace, setConfirmReplace] = useState(false);
  /** What the last change did, in words (a remove of absent addresses changes nothing). */
  const [outcome, setOutcome] = useState<ReturnType<typeof entriesChangeOutcome> | undefined>();
  const refresh = () => {
    void client.invalidateQueries({ queryKey: ['list-entries', props.list.id] });
    void client.invalidateQueries({ queryKey: ['address-lists'] });
    void client.invalidateQueries({ queryKey: ['webhook-limits'] });
  };
  const change = useMutation({
    mutationFn: (kind: 'add' | 'remove' | 'replace') => {
      const body = { addresses: box.entries };
      const base = relay('webhooks', `/address-lists/${props.list.id}/entries`);
      type Changed = { added: number; removed: number };
      const asked = box.checkNow().valid.length;
      const sent =
        kind === 'add'
          ? api<Changed>('POST', base, body)
          : kind === 'remove'
            ? api<Changed>('POST', `${base}/remove`, body)
            : api<Changed>('PUT', base, body);
      return sent.then((answer) => entriesChangeOutcome(kind, asked, answer));
    },
    onMutate: () => setOutcome(undefined),
    onSuccess: (said) => {
      setOutcome(said);
      box.clear();
      setConfirmReplace(false);
      refresh();
    },
    onError: () => setConfirmReplace(false),
  });
  const remove = useMutation({
    mutationFn: () => api('DELETE', relay('webhooks', `/address-lists/${props.list.id}`)),
    onSuccess: () => {
      setConfirmDelete(false);
      refresh();
      props.onDeleted();
    },
    // The refusal (a webhook uses the list) is shown on the page, not behind the modal.
    onError: () => setConfirmDelete(false),
  });
  const error = change.error instanceof ApiError ? change.error : undefined;
  const capError = error && isCapError(error.code) ? error : undefined;
  // A message for the addresses or for none of the box's fields: under the box (its only field).
  const changeErrors = placeErrors(change.error, { addresses: ['addresses'] });
  const inUse =
    remove.error instanceof ApiError && remove.error.code === 'list_in_use'
      ? (remove.error.body['webhook_ids'] as unknown)
      : undefined;
  const size = props.list.size ?? props.list.address_count ?? 0;
  const replacing = box.checked.valid.length;
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
      {remove.error &&
        (Array.isArray(inUse) && inUse.length > 0 ? (
          <ListInUse webhookIds={inUse.map(String)} />
        ) : (
          <Notice tone="bad">{remove.error.message}</Notice>
        ))}
      {capError && <CapNotice error={capError} />}
      <AddressInput
        label="Addresses to change"
        box={box}
        error={capError ? undefined : (changeErrors.fields.addresses ?? changeErrors.notice)}
      />
      <div className="actions">
        <button
          type="button"
          className="button"
          disabled={empty || change.isPending}
          onClick={() => change.mutate('add')}
        >
          Add
        </button>
        <button
          type="button"
          className="button button-secondary"
          disabled={empty || change.isPending}
          onClick={() => change.mutate('remove')}
        >
          Remove
        </button>
        <button
          type="button"
          className="button button-secondary"
          disabled={empty || change.isPending}
          onClick={() => setConfirmReplace(true)}
        >
          Replace all with these
        </button>
      </div>
      {outcome && (
        <div data-testid="entries-outcome">
          <Notice tone={outcome.tone}>{outcome.text}</Notice>
        </div>
      )}
      <ListEntriesBrowser listId={props.list.id} size={size} />
      <ConfirmDialog
        open={confirmReplace}
        title="Replace every address of this list?"
        confirmLabel="Replace all"
        danger
        busy={change.isPending}
        onCancel={() => setConfirmReplace(false)}
        onConfirm={() => change.mutate('replace')}
      >
        <p>
          The {plural(size, 'address', 'addresses')} of “{props.list.name}” are removed and replaced
          by{' '}
          {replacing === 0
            ? 'what is in the box, which holds no valid address'
            : `the ${plural(replacing, 'address', 'addresses')} in the box`}
          . Every webhook using the list watches only these from then on.
        </p>
      </ConfirmDialog>
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
  // The open list is in the address (?list=al_…): a webhook's page links to it, a reload keeps it.
  const [params, setParams] = useSearchParams();
  const selected = params.get('list') ?? undefined;
  const setSelected = (id: string | undefined) =>
    setParams(id ? { list: id } : {}, { replace: true });
  const [name, setName] = useState('');
  const box = useAddressBox();
  const addresses = box.entries;
  const create = useSubmission({
    // One request, name and addresses together: a refused one (a bad address, a cap) makes
    // nothing, where a create followed by an add left an empty list behind.
    values: { name: name.trim(), addresses },
    send: (body) => api<AddressList>('POST', relay('webhooks', '/address-lists'), body),
    onSuccess: (list) => {
      setName('');
      box.clear();
      setSelected(list.id);
      void client.invalidateQueries({ queryKey: ['address-lists'] });
      void client.invalidateQueries({ queryKey: ['webhook-limits'] });
    },
  });
  const error = create.error instanceof ApiError ? create.error : undefined;
  const errors = placeErrors(create.error, { name: ['name'], addresses: ['addresses'] });
  const current = lists.data?.items.find((l) => l.id === selected);
  return (
    <>
      <PageHeader
        title="Address lists"
        description="Named lists of addresses that webhooks watch together."
      />
      <div className="grid grid-2">
        <Card title="Create a list">
          <form onSubmit={create.submit} noValidate>
            <Field label="List name" error={errors.fields.name}>
              <input value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />
            </Field>
            <AddressInput label="Addresses" box={box} error={errors.fields.addresses} />
            {errors.notice &&
              (error && isCapError(error.code) ? (
                <CapNotice error={error} />
              ) : (
                <Notice tone="bad">{errors.notice}</Notice>
              ))}
            <button type="submit" className="button" disabled={!name.trim() || create.pending}>
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
                    {plural(l.size ?? l.address_count ?? 0, 'address', 'addresses')} ·{' '}
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
