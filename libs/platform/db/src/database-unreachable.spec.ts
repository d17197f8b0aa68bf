import { DomainError } from '@meridian/errors';
import { QueryFailedError, TypeORMError } from 'typeorm';
import { isDatabaseUnreachable } from './database-unreachable';

const coded = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDatabaseUnreachable', () => {
  it.each([
    ['TypeORM before connecting', new TypeORMError('Driver not Connected')],
    ['refused', coded('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['reset', coded('read ECONNRESET', 'ECONNRESET')],
    ['timed out', coded('connect ETIMEDOUT 10.0.0.1:5432', 'ETIMEDOUT')],
    ['class 08', coded('connection failure', '08006')],
    ['admin shutdown', coded('terminating connection due to administrator command', '57P01')],
    ['crash shutdown', coded('terminating connection due to crash', '57P02')],
    ['starting up', coded('the database system is starting up', '57P03')],
    ['socket lost', new Error('Connection terminated unexpectedly')],
    ['connect timeout', new Error('Connection terminated due to connection timeout')],
    ['pool wait', new Error('timeout exceeded when trying to connect')],
    [
      'wrapped by TypeORM',
      new QueryFailedError('SELECT 1', [], new Error('Connection terminated unexpectedly')),
    ],
    [
      'as the cause of a DomainError',
      new DomainError('usage_unavailable', 'unavailable', 'x', {
        cause: coded('x', 'ECONNREFUSED'),
      }),
    ],
    [
      'every address refused',
      Object.assign(new AggregateError([coded('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')])),
    ],
  ])('%s: unreachable', (_what, error) => {
    expect(isDatabaseUnreachable(error)).toBe(true);
  });

  it.each([
    ['unique violation', coded('duplicate key', '23505')],
    ['data exception', coded('out of range', '22003')],
    ['serialization', coded('could not serialize access', '40001')],
    ['deadlock', coded('deadlock detected', '40P01')],
    ['query canceled', coded('canceling statement due to statement timeout', '57014')],
    ['a database that does not exist', coded('database "x" does not exist', '3D000')],
    [
      'a fetch refused (a node, an API)',
      new TypeError('fetch failed', { cause: coded('connect ECONNREFUSED', 'ECONNREFUSED') }),
    ],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a number code', { code: 8006 }],
    ['nothing', undefined],
  ])('%s: not', (_what, error) => {
    expect(isDatabaseUnreachable(error)).toBe(false);
  });

  it('stops on a cause that refers to itself', () => {
    const error: Error & { cause?: unknown } = new Error('loop');
    error.cause = error;
    expect(isDatabaseUnreachable(error)).toBe(false);
  });
});
