/**
 * Postgres array literals (`{a,b,"c d"}`) for the large array parameters of the set-based
 * statements (ADR 0104), passed as text and cast in SQL (`$1::bigint[]`). node-postgres turns a
 * JS array parameter into the same literal element by element (a type check, a string
 * conversion and two escaping passes each: ~200 ns an element); a usage transaction at a fleet's
 * shape sends ~500,000 elements (50,000 hourly rollups × 6 columns, journals, entries,
 * balances), so its encoding was a tenth of the ledger's CPU. Here a number array is one
 * `join`, and a string is written bare when it needs no quoting.
 */

/** Elements Postgres reads unquoted as themselves: no quotes, braces, commas, spaces, escapes. */
const BARE = /^[A-Za-z0-9_\-.:+]+$/;

/** A literal of numbers (integers here; each must be finite) or nulls. */
export function numberArray(values: ReadonlyArray<number | null>): string {
  let out = '{';
  for (let i = 0; i < values.length; i += 1) {
    const value = values[i];
    if (i > 0) out += ',';
    if (value === null || value === undefined) out += 'NULL';
    else if (Number.isFinite(value)) out += value;
    else throw new RangeError(`not a finite number: ${value}`);
  }
  return `${out}}`;
}

/** A literal of strings or nulls (`null` → SQL NULL; the string "NULL" stays a string). */
export function textArray(values: ReadonlyArray<string | null>): string {
  let out = '{';
  for (let i = 0; i < values.length; i += 1) {
    const value = values[i];
    if (i > 0) out += ',';
    if (value === null || value === undefined) out += 'NULL';
    else if (BARE.test(value) && value.toUpperCase() !== 'NULL') out += value;
    else out += `"${value.replace(/[\\"]/g, '\\$&')}"`;
  }
  return `${out}}`;
}
