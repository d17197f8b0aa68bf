import { DomainError } from '@meridian/errors';
import { newId } from './credentials/secrets';
import { parseId } from './ids';

describe('parseId', () => {
  it('accepts the ids this service makes, of the asked kind', () => {
    for (const prefix of ['acc', 'key', 'tok'] as const) {
      const id = newId(prefix);
      expect(parseId(prefix, id, 'not found')).toBe(id);
    }
  });

  it.each([
    ['another kind', newId('key'), 'tok'],
    ['a NUL byte', `${newId('tok')}\u0000`, 'tok'],
    ['a UUID', '00000000-0000-0000-0000-000000000000', 'acc'],
    ['upper-case hex', 'tok_ABCDEF0123456789ABCDEF01', 'tok'],
    ['too long', `${newId('acc')}0`, 'acc'],
    ['empty', '', 'key'],
    ['SQL', "tok_' OR 1=1 --", 'tok'],
  ] as const)('answers 404 not_found for %s', (_name, raw, prefix) => {
    let error: unknown;
    try {
      parseId(prefix, raw, 'account not found');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({
      code: 'not_found',
      kind: 'not_found',
      message: 'account not found',
    });
  });
});
