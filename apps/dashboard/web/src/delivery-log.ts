/**
 * The webhook page's delivery log search (webhook-matcher README "Searching the log"; ADR 0433):
 * the query the page asks, and the words of a row's event and outcome. Pure, so unit-tested.
 */

/** The outcomes the log records, in the selector's order, with the selector's words. */
export const DELIVERY_OUTCOMES = [
  ['success', 'Delivered'],
  ['failure', 'Failed'],
  ['skipped_breaker_open', 'Skipped (endpoint failing)'],
  ['dropped', 'Dropped'],
  ['rate_limited', 'Rate limited'],
] as const;

/** The outcome selector: the API's default (failures; every outcome for a search), all, or one. */
export type OutcomeChoice = '' | 'all' | (typeof DELIVERY_OUTCOMES)[number][0];

export interface DeliveryLogFilter {
  /** A transaction hash or a block number (decimal or 0x hex), as typed. */
  search: string;
  outcome: OutcomeChoice;
  /** `<input type="datetime-local">` values (`2026-12-02T10:30`), read as UTC like the page's dates. */
  since: string;
  until: string;
}

export const NO_FILTER: DeliveryLogFilter = { search: '', outcome: '', since: '', until: '' };

export function isFiltered(filter: DeliveryLogFilter): boolean {
  return deliveryLogQuery(filter) !== '';
}

/**
 * The log's query string for a filter (without `?`; '' for the plain failures-only log). The
 * search is a block number when it reads as one (digits, or 0x and at most 16 hex digits: the
 * API's form), else a transaction hash; anything malformed is sent as typed, so the API's 400
 * says what is wrong with it (one home for the rule). Times typed without an offset are UTC.
 */
export function deliveryLogQuery(filter: DeliveryLogFilter): string {
  const params = new URLSearchParams();
  const search = filter.search.trim();
  if (search !== '')
    params.set(/^(\d+|0x[0-9a-fA-F]{1,16})$/.test(search) ? 'block_number' : 'tx_hash', search);
  if (filter.outcome === 'all') params.set('outcome', DELIVERY_OUTCOMES.map(([o]) => o).join(','));
  else if (filter.outcome !== '') params.set('outcome', filter.outcome);
  const since = isoTime(filter.since);
  const until = isoTime(filter.until);
  if (since) params.set('since', since);
  if (until) params.set('until', until);
  return params.toString();
}

/** A datetime-local value as ISO-8601 in UTC (`…T10:30` → `…T10:30:00Z`); else as typed. */
function isoTime(value: string): string | undefined {
  const v = value.trim();
  if (v === '') return undefined;
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(v)) return `${v}:00Z`;
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?$/.test(v)) return `${v}Z`;
  return v;
}

/** What a row's outcome says: the badge's words and colour, and what became of the event. */
export function outcomeWords(row: { outcome: string; final: boolean; test: boolean }): {
  label: string;
  tone: 'ok' | 'warn' | 'bad' | 'neutral';
  /** After the attempt number: ' (gave up)', ' (dropped)', ' (not sent)'; '' for none. */
  attemptNote: string;
} {
  switch (row.outcome) {
    case 'success':
      return { label: 'Delivered', tone: 'ok', attemptNote: '' };
    case 'rate_limited':
      return {
        label: 'Rate limited — not sent, not billed',
        tone: 'warn',
        attemptNote: ' (not sent)',
      };
    case 'failure':
      return { label: 'Failed', tone: 'bad', attemptNote: row.final ? ' (gave up)' : '' };
    case 'dropped':
      return { label: 'Dropped', tone: 'neutral', attemptNote: row.final ? ' (dropped)' : '' };
    case 'skipped_breaker_open':
      return {
        label: 'Skipped: endpoint failing',
        tone: 'bad',
        attemptNote: row.final ? ' (gave up)' : '',
      };
    default:
      return {
        label: row.outcome.replace(/_/g, ' '),
        tone: 'bad',
        attemptNote: row.final ? ' (gave up)' : '',
      };
  }
}

/**
 * What a screen reader hears once a search of the log (or its Clear) has its answer: the rows
 * it shows, said politely (announcer.ts), as the table does not say it changed. `more`: older
 * rows follow (Load older), so the count is of those shown.
 */
export function searchCountWords(count: number, more: boolean, searched: boolean): string {
  const n = count.toLocaleString('en-US');
  const older = more ? '; older ones follow' : '';
  if (!searched)
    return count === 0
      ? 'No failed deliveries.'
      : `${n} failed ${count === 1 ? 'delivery' : 'deliveries'} shown${older}.`;
  if (count === 0) return 'No delivery matches this search.';
  if (count === 1 && !more) return '1 delivery matches this search.';
  return `${n} deliveries ${more ? 'shown ' : ''}match this search${older}.`;
}
