/**
 * A time as the product writes it to people, to the minute in UTC ("2026-12-10 08:02 UTC"): the
 * dashboard's tables and the BFF's messages that name a time say it the same way.
 */
export function utcMinute(at: Date | string): string {
  return `${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
