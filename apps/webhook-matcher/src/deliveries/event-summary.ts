/**
 * The event summary of a delivery-log row (README "Delivery log, stats and replay", ADR 0433):
 * network, block number, transaction hash and the event's addresses, derived in SQL from an
 * event body (`EventBody`, numbers hex) so every writer of `delivery_attempts` fills the same
 * columns the same way: an outcome of delivery-worker (`DeliveriesRepository.record`) and a
 * drop over the events budget (`MatchingRepository.recordEvents`).
 *
 * `addresses`: what an address filter matches on (`blockActivities`): a transaction's `from`
 * and `to`, a log's emitting contract and a token transfer's `from` and `to`; lower case,
 * sorted, distinct. The matcher does not keep which of them the webhook watches.
 */
export const SUMMARY_COLUMNS = 'network, block_number, tx_hash, addresses';

/** SQL of the four summary values (in `SUMMARY_COLUMNS` order) of the jsonb body `p`. */
export function summaryOf(p: string): string {
  const hexToBigint = (v: string) =>
    `CASE WHEN ${v} ~ '^0x[0-9a-fA-F]{1,15}$' ` +
    `THEN ('x' || lpad(substr(${v}, 3), 16, '0'))::bit(64)::bigint END`;
  return `${p}->>'network',
    ${hexToBigint(`${p}->'block'->>'number'`)},
    lower(COALESCE(${p}->'raw'->>'transactionHash', ${p}->'raw'->>'hash')),
    CASE WHEN ${p} IS NOT NULL THEN ARRAY(
      SELECT DISTINCT lower(a) FROM unnest(ARRAY[
        ${p}->'raw'->>'from', ${p}->'raw'->>'to', ${p}->'raw'->>'address',
        ${p}->'decoded'->>'from', ${p}->'decoded'->>'to']) a
       WHERE a IS NOT NULL ORDER BY 1) END`;
}
