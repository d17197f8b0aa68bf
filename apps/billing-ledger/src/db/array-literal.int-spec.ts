import { testDatabaseAdminUrl } from '@meridian/testing';
import { Client } from 'pg';
import { numberArray, textArray } from './array-literal';

/** What Postgres reads back from the literals is exactly what went in. */
describe('Postgres array literals against a real Postgres', () => {
  const pg = new Client({ connectionString: testDatabaseAdminUrl() });
  beforeAll(() => pg.connect());
  afterAll(() => pg.end());

  it('round-trips awkward strings, nulls, JSON and timestamps', async () => {
    const values = [
      'acc_1',
      'NULL',
      'null',
      '',
      ' padded ',
      'a,b',
      '{braces}',
      'quote " and \\ backslash',
      'tab\tnew\nline',
      'é ü 漢',
      JSON.stringify({ kind: 'node', note: 'a "quoted", {braced} value\\' }),
      null,
    ];
    const text = await pg.query<{ v: Array<string | null> }>('SELECT $1::text[] AS v', [
      textArray(values),
    ]);
    expect(text.rows[0]!.v).toEqual(values);
    const json = await pg.query<{ v: unknown }>('SELECT ($1::jsonb[])[1] AS v', [
      textArray([values[10]!]),
    ]);
    expect(json.rows[0]!.v).toEqual(JSON.parse(values[10]!));
    const at = '2026-11-26T17:00:00.123Z';
    const times = await pg.query<{ v: Date[] }>('SELECT $1::timestamptz[] AS v', [textArray([at])]);
    expect(times.rows[0]!.v[0]!.toISOString()).toBe(at);
  });

  it('round-trips bigints up to the largest safe integer', async () => {
    const values = [0, -1, 42, 9_007_199_254_740_991, -9_007_199_254_740_991, null];
    const result = await pg.query<{ v: Array<string | null> }>('SELECT $1::bigint[] AS v', [
      numberArray(values),
    ]);
    expect(result.rows[0]!.v.map((v) => (v === null ? null : Number(v)))).toEqual(values);
  });
});
