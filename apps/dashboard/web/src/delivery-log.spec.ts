import {
  DELIVERY_OUTCOMES,
  deliveryLogQuery,
  NO_FILTER,
  outcomeWords,
  searchCountWords,
} from './delivery-log';

const TX = '0x' + 'ab'.repeat(32);

describe('deliveryLogQuery', () => {
  it('no filter: the plain failures-only log', () => {
    expect(deliveryLogQuery(NO_FILTER)).toBe('');
    expect(deliveryLogQuery({ ...NO_FILTER, search: '   ' })).toBe('');
  });

  it('a transaction hash, or a block number in decimal or 0x hex (the API form)', () => {
    expect(deliveryLogQuery({ ...NO_FILTER, search: ` ${TX} ` })).toBe(`tx_hash=${TX}`);
    expect(deliveryLogQuery({ ...NO_FILTER, search: '21000000' })).toBe('block_number=21000000');
    expect(deliveryLogQuery({ ...NO_FILTER, search: '0x1406f40' })).toBe('block_number=0x1406f40');
    // Anything else goes as a hash, as typed: the API's 400 says what is wrong with it.
    expect(deliveryLogQuery({ ...NO_FILTER, search: '0xabc1234567890abcde' })).toBe(
      'tx_hash=0xabc1234567890abcde',
    );
  });

  it('outcome: one, all (every outcome the log records), or the default', () => {
    expect(deliveryLogQuery({ ...NO_FILTER, outcome: 'rate_limited' })).toBe(
      'outcome=rate_limited',
    );
    expect(deliveryLogQuery({ ...NO_FILTER, outcome: 'all' })).toBe(
      'outcome=' + encodeURIComponent('success,failure,skipped_breaker_open,dropped,rate_limited'),
    );
  });

  it('since / until typed without an offset are UTC; with one, sent as typed', () => {
    expect(
      deliveryLogQuery({ ...NO_FILTER, since: '2026-12-02T10:30', until: '2026-12-02T11:00:15' }),
    ).toBe(
      `since=${encodeURIComponent('2026-12-02T10:30:00Z')}&until=${encodeURIComponent('2026-12-02T11:00:15Z')}`,
    );
    expect(deliveryLogQuery({ ...NO_FILTER, since: '2026-12-02T10:30:00+01:00' })).toBe(
      `since=${encodeURIComponent('2026-12-02T10:30:00+01:00')}`,
    );
  });
});

describe('outcomeWords', () => {
  const row = (outcome: string, final = true, test = false) => ({ outcome, final, test });

  it('a rate-limited row says it was not sent and not billed', () => {
    expect(outcomeWords(row('rate_limited'))).toEqual({
      label: 'Rate limited — not sent, not billed',
      tone: 'warn',
      attemptNote: ' (not sent)',
    });
  });

  it('the other outcomes', () => {
    expect(outcomeWords(row('success')).label).toBe('Delivered');
    expect(outcomeWords(row('failure')).attemptNote).toBe(' (gave up)');
    expect(outcomeWords(row('failure', false)).attemptNote).toBe('');
    expect(outcomeWords(row('dropped')).attemptNote).toBe(' (dropped)');
    expect(outcomeWords(row('skipped_breaker_open')).label).toBe('Skipped: endpoint failing');
  });

  it('every outcome the filter offers is said in words, never its code (QA: "failure")', () => {
    expect(outcomeWords(row('failure'))).toEqual({
      label: 'Failed',
      tone: 'bad',
      attemptNote: ' (gave up)',
    });
    for (const [outcome, words] of DELIVERY_OUTCOMES) {
      const label = outcomeWords(row(outcome)).label;
      expect(label).not.toBe(outcome.replace(/_/g, ' '));
      // The row's badge starts as the filter's option does ("Skipped …", "Rate limited …").
      expect(label.slice(0, 7)).toBe(words.slice(0, 7));
    }
  });
});

describe('searchCountWords', () => {
  it.each([
    [0, false, true, 'No delivery matches this search.'],
    [1, false, true, '1 delivery matches this search.'],
    [12, false, true, '12 deliveries match this search.'],
    [50, true, true, '50 deliveries shown match this search; older ones follow.'],
    [0, false, false, 'No failed deliveries.'],
    [1, false, false, '1 failed delivery shown.'],
    [1200, true, false, '1,200 failed deliveries shown; older ones follow.'],
  ])('%d rows, more %s, searched %s: %s', (count, more, searched, words) => {
    expect(searchCountWords(count, more, searched)).toBe(words);
  });
});
