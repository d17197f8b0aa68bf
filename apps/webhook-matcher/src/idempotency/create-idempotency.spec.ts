import { DomainError } from '@meridian/errors';
import { idempotentCreate } from './create-idempotency';

describe('idempotentCreate: the one Idempotency-Key rule of every create', () => {
  it('no row with the key: create', () => {
    expect(idempotentCreate(null, ['h'], 'address list')).toEqual({ replay: null });
  });

  it('the row of the same request (any of its fingerprints): replay it', () => {
    const row = { id: 'x', idempotency_request_hash: 'legacy' };
    expect(idempotentCreate(row, ['new', 'legacy'], 'webhook')).toEqual({ replay: row });
  });

  it('a row stored before fingerprints (null): replay it for any request', () => {
    const row = { id: 'x', idempotency_request_hash: null };
    expect(idempotentCreate(row, ['h'], 'webhook')).toEqual({ replay: row });
  });

  it('another request: 409 idempotency_key_reused naming what a new key makes', () => {
    let error: unknown;
    try {
      idempotentCreate({ idempotency_request_hash: 'a' }, ['b'], 'address list');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'idempotency_key_reused', kind: 'conflict' });
    expect((error as Error).message).toContain('new address list');
  });
});
