import { useInfiniteQuery } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import { announce } from '../announcer';
import { api, ApiError } from '../api';
import {
  DELIVERY_OUTCOMES,
  deliveryLogQuery,
  NO_FILTER,
  type DeliveryLogFilter,
  type OutcomeChoice,
  outcomeWords,
  searchCountWords,
} from '../delivery-log';
import { eventBudget, replayRows } from '../failed-deliveries';
import { formatDateTimeSeconds, formatNumber, networkLabel } from '../format';
import type { DeliveryAttempt, Page } from '../types';
import { Field } from './field';
import { Badge, Card, Empty, ErrorState, Loading, Notice } from './ui';

/**
 * A webhook's delivery log, newest first, a page at a time ("Load older" follows next_cursor):
 * without a search the failed attempts (the API's default); a search (tx hash, block, outcome,
 * time) is the API's own filter, its 400 said under the form (delivery-log.ts). The customer's
 * webhook page and the operator's account page show the same log; only the customer's has
 * Replay (`replay`), the operator's is read-only.
 */
export function DeliveryLogCard(props: {
  /** The log's URL without its query (the relay's, or the operator's route). */
  url: string;
  /** The queries' key; the search's query is added to it (invalidate this prefix to refresh). */
  queryKey: readonly unknown[];
  /** Replay of a given-up event (its newest row's button); none on a read-only log. */
  replay?: { pending: boolean; onReplay: (eventId: string) => void };
  /** Shown between the search and the log (the outcome of a replay). */
  notices?: ReactNode;
  /** Added to the title (the webhook's name where several webhooks share a page). */
  subject?: string;
}) {
  const { replay } = props;
  const [typedFilter, setTypedFilter] = useState<DeliveryLogFilter>(NO_FILTER);
  const [logFilter, setLogFilter] = useState<DeliveryLogFilter>(NO_FILTER);
  const logQuery = deliveryLogQuery(logFilter);
  const deliveries = useInfiniteQuery({
    queryKey: [...props.queryKey, logQuery],
    queryFn: ({ pageParam }) => {
      const params = new URLSearchParams(logQuery);
      if (pageParam) params.set('cursor', pageParam);
      const query = params.toString();
      return api<Page<DeliveryAttempt>>('GET', `${props.url}${query ? `?${query}` : ''}`);
    },
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const attempts = deliveries.data?.pages.flatMap((p) => p.items) ?? [];
  const replayable = replayRows(attempts);
  // A search (or Clear) asked: its count is announced once its answer is in (a refused search
  // is said by its notice, an alert).
  const [asked, setAsked] = useState(false);
  const settled = !deliveries.isFetching;
  const failed = deliveries.isError && !deliveries.data;
  useEffect(() => {
    if (!asked || !settled) return;
    setAsked(false);
    if (!failed)
      announce(searchCountWords(attempts.length, deliveries.hasNextPage, logQuery !== ''));
  }, [asked, settled, failed, attempts.length, deliveries.hasNextPage, logQuery]);
  const search = (filter: DeliveryLogFilter) => {
    setLogFilter(filter);
    setAsked(true);
  };
  return (
    <Card
      title={`${logQuery ? 'Deliveries found' : 'Failed deliveries'}${props.subject ? `: ${props.subject}` : ''}`}
    >
      <form
        className="form-row delivery-search"
        aria-label="Search the delivery log"
        onSubmit={(e) => {
          e.preventDefault();
          search(typedFilter);
        }}
      >
        <Field
          label="Transaction hash or block number"
          hint="Every attempt of that transaction's or block's events, delivered ones included."
        >
          <input
            type="search"
            spellCheck={false}
            placeholder="0x… or 21000000"
            data-testid="delivery-search"
            value={typedFilter.search}
            onChange={(e) => setTypedFilter({ ...typedFilter, search: e.target.value })}
          />
        </Field>
        <Field label="Outcome">
          <select
            data-testid="delivery-outcome-filter"
            value={typedFilter.outcome}
            onChange={(e) =>
              setTypedFilter({ ...typedFilter, outcome: e.target.value as OutcomeChoice })
            }
          >
            <option value="">Failures (every outcome for a search)</option>
            <option value="all">All outcomes</option>
            {DELIVERY_OUTCOMES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Since (UTC)">
          <input
            type="datetime-local"
            value={typedFilter.since}
            onChange={(e) => setTypedFilter({ ...typedFilter, since: e.target.value })}
          />
        </Field>
        <Field label="Until (UTC)">
          <input
            type="datetime-local"
            value={typedFilter.until}
            onChange={(e) => setTypedFilter({ ...typedFilter, until: e.target.value })}
          />
        </Field>
        <div className="actions">
          <button type="submit" className="button button-small">
            Search
          </button>
          {(logQuery || deliveryLogQuery(typedFilter)) && (
            <button
              type="button"
              className="button button-small button-secondary"
              onClick={() => {
                setTypedFilter(NO_FILTER);
                search(NO_FILTER);
              }}
            >
              Clear
            </button>
          )}
        </div>
      </form>
      {props.notices}
      {deliveries.isPending ? (
        <Loading />
      ) : deliveries.isError && !deliveries.data ? (
        logQuery && deliveries.error instanceof ApiError && deliveries.error.status === 400 ? (
          <Notice tone="bad">
            <span data-testid="delivery-search-error">
              This search cannot be made: {deliveries.error.message}
            </span>
          </Notice>
        ) : (
          <ErrorState error={deliveries.error} retry={() => void deliveries.refetch()} />
        )
      ) : attempts.length === 0 ? (
        <Empty title={logQuery ? 'No delivery matches this search.' : 'No failed deliveries.'} />
      ) : (
        <>
          <table className="table table-stack delivery-log" data-testid="failed-deliveries">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">Transaction</th>
                <th scope="col">Phase</th>
                <th scope="col">Attempt</th>
                <th scope="col">Outcome</th>
                <th scope="col">Answer</th>
                {replay && (
                  <th scope="col">
                    <span className="visually-hidden">Replay</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {attempts.map((d, i) => (
                <tr key={`${d.event_id}/${d.phase}/${d.attempt}/${d.at}/${d.outcome}`}>
                  <td data-label="When" data-testid="delivery-at">
                    {formatDateTimeSeconds(d.at)}
                  </td>
                  <td data-label="Event">
                    <code data-testid="delivery-event">{d.event_id}</code>
                    {d.test && <span className="muted"> (test)</span>}
                  </td>
                  <td data-label="Transaction" data-testid="delivery-tx">
                    {d.tx_hash === null && d.block_number === null ? (
                      <span className="muted">—</span>
                    ) : (
                      <>
                        {d.tx_hash !== null && (
                          <code data-testid="delivery-tx-hash">{d.tx_hash}</code>
                        )}
                        {d.block_number !== null && (
                          <div className="muted" data-testid="delivery-block">
                            block {formatNumber(d.block_number)}
                            {d.network ? ` · ${networkLabel(d.network)}` : ''}
                          </div>
                        )}
                        {d.addresses.length > 0 && (
                          <ul className="delivery-addresses" data-testid="delivery-addresses">
                            {d.addresses.map((a) => (
                              <li key={a}>
                                <code>{a}</code>
                              </li>
                            ))}
                          </ul>
                        )}
                      </>
                    )}
                  </td>
                  <td data-label="Phase" data-testid="delivery-phase">
                    {d.phase}
                  </td>
                  <td data-label="Attempt">
                    {d.attempt}
                    {outcomeWords(d).attemptNote && (
                      <span className="muted">{outcomeWords(d).attemptNote}</span>
                    )}
                    {eventBudget(d) !== null && (
                      <span className="muted" data-testid="delivery-event-budget">
                        {' '}
                        · {eventBudget(d)}
                      </span>
                    )}
                  </td>
                  <td data-label="Outcome" data-testid="delivery-outcome">
                    <Badge tone={outcomeWords(d).tone}>{outcomeWords(d).label}</Badge>
                    {d.error_class && d.error_class !== d.outcome && (
                      <span className="muted"> · {d.error_class}</span>
                    )}
                  </td>
                  <td data-label="Answer" data-testid="delivery-answer">
                    {d.status_code !== null ? `HTTP ${d.status_code}` : (d.error ?? '—')}
                    {d.duration_ms !== null && (
                      <span className="muted"> in {formatNumber(d.duration_ms)} ms</span>
                    )}
                  </td>
                  {replay && (
                    <td className={replayable.has(i) ? undefined : 'stack-empty'}>
                      {replayable.has(i) && (
                        <button
                          type="button"
                          className="button button-small button-secondary"
                          aria-label={`Replay event ${d.event_id}`}
                          disabled={replay.pending}
                          onClick={() => replay.onReplay(d.event_id)}
                        >
                          Replay
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
          <div className="actions table-footer">
            <span className="muted" data-testid="deliveries-shown">
              {formatNumber(attempts.length)} {attempts.length === 1 ? 'attempt' : 'attempts'} shown
              {deliveries.hasNextPage ? '; older ones follow' : '; no older ones'}.
            </span>
            {deliveries.hasNextPage && (
              <button
                type="button"
                className="button button-secondary button-small"
                disabled={deliveries.isFetchingNextPage}
                onClick={() => void deliveries.fetchNextPage()}
              >
                {deliveries.isFetchingNextPage ? 'Loading…' : 'Load older'}
              </button>
            )}
          </div>
          {deliveries.isFetchNextPageError && (
            <Notice tone="bad">
              Older attempts could not be loaded: {deliveries.error.message}
            </Notice>
          )}
        </>
      )}
    </Card>
  );
}
