import { fieldPath, fieldsOf, placeErrors } from './form-errors';

/** An ApiError as api() throws it (api.tsx is a .tsx module; the shape is what counts). */
const apiError = (body: Record<string, unknown>) =>
  Object.assign(new Error(String(body['message'])), { fields: fieldsOf(body) });

describe('fieldPath', () => {
  it.each([
    ['body.cu', 'cu'],
    ['body.accounts[1].plan', 'accounts[1].plan'],
    ['body[0]', '[0]'],
    ['query.limit', 'limit'],
    ['/target_url', 'target_url'],
    ['/filters/tx_hash', 'filters.tx_hash'],
    ['cu', 'cu'],
    ['body', 'body'],
    ['bodyweight', 'bodyweight'],
  ])('%s → %s', (path, field) => expect(fieldPath(path)).toBe(field));
});

describe('fieldsOf', () => {
  it('reads a zod 400 located in the body as the form names the field', () => {
    // billing-ledger's answer to a top-up of 0 (QA round D: the page showed nothing).
    expect(
      fieldsOf({
        error: 'malformed_body',
        message: 'body.cu: Too small: expected number to be >=1',
        location: 'body',
        path: 'body.cu',
      }),
    ).toEqual({ cu: 'must be at least 1' });
  });

  it('reads `fields`, JSON pointers and `details[]`', () => {
    expect(fieldsOf({ message: 'x', fields: { 'body.cu': 'too many' } })).toEqual({
      cu: 'too many',
    });
    expect(fieldsOf({ message: 'use https', pointer: '/target_url' })).toEqual({
      target_url: 'use https',
    });
    expect(
      fieldsOf({ details: [{ path: ['body', 'addresses', 3], message: 'not an address' }] }),
    ).toEqual({ 'addresses.3': 'not an address' });
  });
});

describe('placeErrors', () => {
  it('puts a message under the field it names', () => {
    const error = apiError({ message: 'body.cu: too small', path: 'body.cu' });
    // Under its field the message goes without its location.
    expect(placeErrors(error, { cu: ['cu'] })).toEqual({
      fields: { cu: 'too small' },
      notice: undefined,
    });
  });

  it('gives a field the messages of the paths under it, by the form’s own name', () => {
    const error = apiError({ message: 'bad hash', path: 'body.filters.tx_hash.in[1]' });
    expect(placeErrors(error, { hashes: ['filters'], addresses: ['addresses'] })).toEqual({
      fields: { hashes: 'bad hash' },
      notice: undefined,
    });
  });

  it('shows an error whose field the form does not have as the notice, never nothing', () => {
    const error = apiError({ message: 'body: unknown field "x"', path: 'body' });
    expect(placeErrors(error, { cu: ['cu'] })).toEqual({
      fields: {},
      notice: 'body: unknown field "x"',
    });
    const header = apiError({ message: 'bad key', path: 'headers.idempotency-key' });
    expect(placeErrors(header, { cu: ['cu'] }).notice).toBe('bad key');
  });

  it('shows an error that names no field, or a request with no answer, as the notice', () => {
    expect(placeErrors(apiError({ message: 'plan cap reached' }), { cu: ['cu'] })).toEqual({
      fields: {},
      notice: 'plan cap reached',
    });
    expect(placeErrors(new TypeError('Failed to fetch'), { cu: ['cu'] }).notice).toBe(
      'Failed to fetch',
    );
  });

  it('places what it can and lists the rest in the notice', () => {
    const error = Object.assign(new Error('two problems'), {
      fields: { name: 'too long', colour: 'not a colour' },
    });
    expect(placeErrors(error, { name: ['name'] })).toEqual({
      fields: { name: 'too long' },
      notice: 'not a colour',
    });
  });

  it('says nothing without an error', () => {
    expect(placeErrors(null, { cu: ['cu'] })).toEqual({ fields: {}, notice: undefined });
  });
});
